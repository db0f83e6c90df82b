import { randomBytes } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { BlobTooLargeError } from '../blobStore';
import { OffThreadSha256 } from '../offThreadSha256';
import { drainInBatches } from './drainInBatches';

const KiB = 1024;

/** Collects copies of the batches (the originals go back to the pool once hashed). */
function collector(delayMs = 0) {
  const batches: Buffer[] = [];
  let active = 0;
  let overlapped = false;
  const onBatch = async (batch: Buffer): Promise<void> => {
    active++;
    overlapped ||= active > 1;
    batches.push(Buffer.from(batch));
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    active--;
  };
  return { batches, onBatch, overlapped: () => overlapped };
}

test('hands on every byte in order, in full batches then the rest, one at a time, for any chunking', async () => {
  const data = randomBytes(300 * KiB + 17);
  for (const chunkSize of [1, 4 * KiB + 3, 64 * KiB, 250 * KiB]) {
    const chunks = [];
    for (let at = 0; at < data.length; at += chunkSize) chunks.push(data.subarray(at, at + chunkSize));
    const sink = collector(1);
    const size = await drainInBatches(Readable.from(chunks), { batchBytes: 100 * KiB }, sink.onBatch);
    expect(size).toBe(data.length);
    expect(sink.batches.map((b) => b.length)).toEqual([100 * KiB, 100 * KiB, 100 * KiB, 17]);
    expect(Buffer.concat(sink.batches).equals(data)).toBe(true);
    expect(sink.overlapped()).toBe(false);
  }
});

test('an empty stream hands on nothing', async () => {
  const sink = collector();
  await expect(drainInBatches(Readable.from([]), { batchBytes: KiB }, sink.onBatch)).resolves.toBe(0);
  expect(sink.batches).toEqual([]);
});

test('the size limit fails before any byte beyond it is handed on, and destroys the stream', async () => {
  const body = Readable.from([randomBytes(3 * KiB), randomBytes(3 * KiB)]);
  const sink = collector();
  await expect(
    drainInBatches(body, { batchBytes: 2 * KiB, maxBytes: 5 * KiB }, sink.onBatch),
  ).rejects.toThrow(BlobTooLargeError);
  expect(sink.batches.reduce((n, b) => n + b.length, 0)).toBeLessThanOrEqual(5 * KiB);
  expect(body.destroyed).toBe(true);
  // Exactly at the limit is allowed.
  const exact = collector();
  await expect(
    drainInBatches(
      Readable.from([randomBytes(5 * KiB)]),
      { batchBytes: 2 * KiB, maxBytes: 5 * KiB },
      exact.onBatch,
    ),
  ).resolves.toBe(5 * KiB);
});

test('a stream error, a premature close or a failed hand-off rejects with that failure', async () => {
  const failing = new PassThrough();
  const failed = drainInBatches(failing, { batchBytes: KiB }, collector().onBatch);
  failing.write(randomBytes(10));
  failing.destroy(new Error('client went away'));
  await expect(failed).rejects.toThrow('client went away');

  const closed = new PassThrough();
  const prematurely = drainInBatches(closed, { batchBytes: KiB }, collector().onBatch);
  closed.write(randomBytes(10));
  closed.destroy();
  await expect(prematurely).rejects.toThrow('Premature close');

  const body = Readable.from([randomBytes(4 * KiB)]);
  const rejecting = drainInBatches(body, { batchBytes: KiB }, () => Promise.reject(new Error('disk full')));
  await expect(rejecting).rejects.toThrow('disk full');
  expect(body.destroyed).toBe(true);
});

test('the stream waits while a batch is handed on, so a slow consumer bounds what is read ahead', async () => {
  let produced = 0;
  const body = new Readable({
    highWaterMark: 16 * KiB,
    read() {
      produced += 16 * KiB;
      this.push(produced > 1024 * KiB ? null : Buffer.alloc(16 * KiB));
    },
  });
  let consumed = 0;
  let maxAhead = 0;
  await drainInBatches(body, { batchBytes: 64 * KiB }, async (batch) => {
    consumed += batch.length;
    maxAhead = Math.max(maxAhead, produced - consumed);
    await new Promise((resolve) => setTimeout(resolve, 2));
  });
  expect(consumed).toBe(1024 * KiB);
  // One batch being filled, the stream's own buffer and a chunk in flight: never the whole body.
  expect(maxAhead).toBeLessThanOrEqual(128 * KiB);
});

test('the batches are hashing-thread memory that OffThreadSha256 takes as they are', async () => {
  const data = randomBytes(3 * 1024 * KiB + 5);
  const hash = new OffThreadSha256();
  await drainInBatches(Readable.from([data]), { batchBytes: 1024 * KiB }, (batch) => hash.update(batch));
  const { createHash } = await import('node:crypto');
  expect(await hash.digest()).toBe(createHash('sha256').update(data).digest('hex'));
});

test('a batch size beyond the pooled capacity is refused', () => {
  expect(() =>
    drainInBatches(Readable.from([]), { batchBytes: 64 * 1024 * KiB }, collector().onBatch),
  ).toThrow(RangeError);
});
