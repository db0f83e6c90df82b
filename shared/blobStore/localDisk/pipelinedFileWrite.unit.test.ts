import { createHash, randomBytes } from 'node:crypto';
import { BATCH_BYTES, OffThreadSha256 } from '#shared/blobStore/offThreadSha256';
import { PipelinedFileWrite, type WritableFile } from './pipelinedFileWrite';

const MiB = 1024 * 1024;
const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/**
 * A file in memory whose writes complete when the test says (or at once), at most `maxPerWrite`
 * bytes at a time, and whose flushes can be made to fail.
 */
class FakeFile implements WritableFile {
  readonly held: (() => void)[] = [];
  hold = false;
  inFlight = 0;
  maxInFlight = 0;
  datasyncs = 0;
  failWriteAt: number | undefined;
  /** The error code a failing write throws with. */
  failWriteCode = 'EIO';
  failDatasync = false;
  syncs = 0;
  /** Bytes written through this handle. */
  written = 0;

  /** content: shared with another handle on the same file (one opened with O_DIRECT). */
  constructor(
    private readonly maxPerWrite = Infinity,
    readonly content = Buffer.alloc(66 * MiB),
  ) {}

  // The overloads of FileHandle.write reduce to this one for the writer.
  write = (async (buffer: Buffer, offset: number, length: number, position: number) => {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    if (this.hold) await new Promise<void>((resolve) => this.held.push(resolve));
    else await new Promise<void>((resolve) => setImmediate(resolve));
    this.inFlight--;
    if (this.failWriteAt !== undefined && position + length > this.failWriteAt)
      throw Object.assign(new Error(`${this.failWriteCode}: the disk went away`), {
        code: this.failWriteCode,
      });
    const n = Math.min(length, this.maxPerWrite);
    buffer.copy(this.content, position, offset, offset + n);
    this.written += n;
    return { bytesWritten: n, buffer };
  }) as unknown as WritableFile['write'];

  datasync = async (): Promise<void> => {
    this.datasyncs++;
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.failDatasync) throw new Error('EIO: writeback failed');
  };

  sync = async (): Promise<void> => {
    this.syncs++;
    await Promise.resolve();
  };

  release(): void {
    this.held.splice(0).forEach((resolve) => resolve());
  }
}

/** Appends `data` in batches of `size` bytes (at most BATCH_BYTES) of the hash's memory. */
async function appendAll(
  output: PipelinedFileWrite,
  hash: OffThreadSha256,
  data: Buffer,
  size: number,
): Promise<void> {
  for (let at = 0; at < data.length; at += size)
    await output.append(batchOf(hash, data.subarray(at, at + size)));
}

function batchOf(hash: OffThreadSha256, bytes: Buffer): Buffer {
  const batch = hash.batch();
  bytes.copy(batch);
  return batch.subarray(0, bytes.length);
}

test('every byte lands at its offset, hashed in order, with several writes in flight and partial writes', async () => {
  const file = new FakeFile(300_000);
  const hash = new OffThreadSha256();
  const output = new PipelinedFileWrite(file, hash);
  const data = randomBytes(20 * MiB + 12_345);
  await appendAll(output, hash, data, MiB);
  await output.finish();
  expect(file.content.subarray(0, data.length).equals(data)).toBe(true);
  expect(output.size).toBe(data.length);
  expect(await hash.digest()).toBe(sha256(data));
  expect(file.maxInFlight).toBeGreaterThan(1);
  expect(file.syncs).toBe(1);
});

test('append waits while 8 MiB are pending, and goes on as writes complete', async () => {
  const file = new FakeFile();
  file.hold = true;
  const hash = new OffThreadSha256();
  const output = new PipelinedFileWrite(file, hash);
  for (let i = 0; i < 8; i++) await output.append(batchOf(hash, randomBytes(MiB)));
  let ninth = false;
  const appended = output.append(batchOf(hash, randomBytes(MiB))).then(() => (ninth = true));
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(ninth).toBe(false);
  expect(file.inFlight).toBe(9);
  file.release();
  await appended;
  file.hold = false;
  file.release();
  await output.finish();
  expect(output.size).toBe(9 * MiB);
  await hash.digest();
});

test('flushes in the background every 64 MiB, and the final sync still runs', async () => {
  const file = new FakeFile();
  const hash = new OffThreadSha256();
  const output = new PipelinedFileWrite(file, hash);
  await appendAll(output, hash, Buffer.alloc(60 * MiB, 7), MiB - 1);
  expect(file.datasyncs).toBe(0);
  await appendAll(output, hash, Buffer.alloc(3 * MiB, 7), MiB);
  await output.finish();
  expect(file.datasyncs).toBe(0); // 63 MiB: below the first flush
  await hash.digest();

  const larger = new FakeFile();
  const second = new OffThreadSha256();
  const more = new PipelinedFileWrite(larger, second);
  await appendAll(more, second, randomBytes(64 * MiB), MiB);
  await more.finish();
  expect(larger.datasyncs).toBe(1);
  expect(larger.syncs).toBe(1);
  await second.digest();
});

test('a failed background flush fails the blob even though the final sync succeeds', async () => {
  const file = new FakeFile();
  file.failDatasync = true;
  const hash = new OffThreadSha256();
  const output = new PipelinedFileWrite(file, hash);
  await appendAll(output, hash, randomBytes(64 * MiB), MiB);
  await expect(output.finish()).rejects.toThrow('writeback failed');
  hash.abort();
});

test('a failed write rejects append or finish; quiesce then waits for every write, with no unhandled rejection', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const file = new FakeFile();
    file.failWriteAt = 3 * MiB;
    const hash = new OffThreadSha256();
    const output = new PipelinedFileWrite(file, hash);
    const failure = appendAll(output, hash, randomBytes(12 * MiB), MiB).then(() => output.finish());
    await expect(failure).rejects.toThrow('the disk went away');
    hash.abort();
    await output.quiesce();
    expect(file.inFlight).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(unhandled).toEqual([]);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

describe('with the file opened again with O_DIRECT', () => {
  const setup = () => {
    const cached = new FakeFile();
    const direct = new FakeFile(Infinity, cached.content);
    const hash = new OffThreadSha256();
    return { cached, direct, hash, output: new PipelinedFileWrite(cached, hash, direct) };
  };

  test('whole batches bypass the page cache; the short last one goes through it; no background flush for bypassed bytes', async () => {
    expect(BATCH_BYTES % MiB).toBe(0); // so the 1 MiB batches below are whole pages
    const { cached, direct, hash, output } = setup();
    const data = randomBytes(65 * MiB + 5000);
    await appendAll(output, hash, data, MiB);
    await output.finish();
    expect(cached.content.subarray(0, data.length).equals(data)).toBe(true);
    expect(direct.written).toBe(65 * MiB);
    expect(cached.written).toBe(5000);
    expect(cached.datasyncs).toBe(0);
    expect(cached.syncs).toBe(1); // the fsync that makes the bypassed bytes durable too
    expect(await hash.digest()).toBe(sha256(data));
  });

  test('a batch at an offset O_DIRECT refuses goes through the page cache', async () => {
    const { cached, direct, hash, output } = setup();
    const data = randomBytes(3 * MiB + 100);
    await output.append(batchOf(hash, data.subarray(0, 100)));
    await appendAll(output, hash, data.subarray(100), MiB);
    await output.finish();
    expect(direct.written).toBe(0);
    expect(cached.content.subarray(0, data.length).equals(data)).toBe(true);
    expect(await hash.digest()).toBe(sha256(data));
  });

  test('EINVAL from a bypassing write: that batch and the rest are written through the page cache', async () => {
    const { cached, direct, hash, output } = setup();
    direct.failWriteAt = 2 * MiB + 1;
    direct.failWriteCode = 'EINVAL';
    const data = randomBytes(6 * MiB);
    await appendAll(output, hash, data, MiB);
    await output.finish();
    expect(cached.content.subarray(0, data.length).equals(data)).toBe(true);
    expect(direct.written).toBe(2 * MiB);
    expect(cached.written).toBe(4 * MiB);
    expect(await hash.digest()).toBe(sha256(data));
  });

  test('any other failure of a bypassing write fails the blob', async () => {
    const { direct, hash, output } = setup();
    direct.failWriteAt = MiB + 1;
    const failure = appendAll(output, hash, randomBytes(4 * MiB), MiB).then(() => output.finish());
    await expect(failure).rejects.toThrow('EIO: the disk went away');
    await output.quiesce();
    hash.abort();
  });
});
