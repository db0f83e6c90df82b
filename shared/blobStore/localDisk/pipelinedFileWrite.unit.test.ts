import { createHash, randomBytes } from 'node:crypto';
import { batchBuffer, OffThreadSha256 } from '../offThreadSha256';
import { PipelinedFileWrite, type WritableFile } from './pipelinedFileWrite';

const MiB = 1024 * 1024;
const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/**
 * A file in memory whose writes complete when the test says (or at once), at most `maxPerWrite`
 * bytes at a time, and whose flushes can be made to fail.
 */
class FakeFile implements WritableFile {
  readonly content = Buffer.alloc(64 * MiB);
  readonly held: (() => void)[] = [];
  hold = false;
  inFlight = 0;
  maxInFlight = 0;
  datasyncs = 0;
  failWriteAt: number | undefined;
  failDatasync = false;
  syncs = 0;

  constructor(private readonly maxPerWrite = Infinity) {}

  // The overloads of FileHandle.write reduce to this one for the writer.
  write = (async (buffer: Buffer, offset: number, length: number, position: number) => {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    if (this.hold) await new Promise<void>((resolve) => this.held.push(resolve));
    else await new Promise<void>((resolve) => setImmediate(resolve));
    this.inFlight--;
    if (this.failWriteAt !== undefined && position + length > this.failWriteAt)
      throw new Error('EIO: the disk went away');
    const n = Math.min(length, this.maxPerWrite);
    buffer.copy(this.content, position, offset, offset + n);
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

async function appendAll(output: PipelinedFileWrite, data: Buffer, batch: number): Promise<void> {
  for (let at = 0; at < data.length; at += batch) {
    const part = data.subarray(at, Math.min(data.length, at + batch));
    await output.append(batchBuffer([part], part.length));
  }
}

test('every byte lands at its offset, hashed in order, with several writes in flight and partial writes', async () => {
  const file = new FakeFile(300_000);
  const hash = new OffThreadSha256();
  const output = new PipelinedFileWrite(file, hash);
  const data = randomBytes(20 * MiB + 12_345);
  await appendAll(output, data, MiB);
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
  for (let i = 0; i < 8; i++) await output.append(batchBuffer([randomBytes(MiB)], MiB));
  let ninth = false;
  const appended = output.append(batchBuffer([randomBytes(MiB)], MiB)).then(() => (ninth = true));
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
  await appendAll(output, Buffer.alloc(60 * MiB, 7), 2 * MiB - 1);
  expect(file.datasyncs).toBe(0);
  await appendAll(output, Buffer.alloc(3 * MiB, 7), MiB);
  await output.finish();
  expect(file.datasyncs).toBe(0); // 63 MiB: below the first flush
  await hash.digest();

  const larger = new FakeFile();
  const second = new OffThreadSha256();
  const more = new PipelinedFileWrite(larger, second);
  await appendAll(more, randomBytes(64 * MiB), MiB);
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
  await appendAll(output, randomBytes(64 * MiB), MiB);
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
    const failure = appendAll(output, randomBytes(12 * MiB), MiB).then(() => output.finish());
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
