import { createHash, randomBytes } from 'node:crypto';
import { BATCH_BYTES, OffThreadSha256, directWritable, sharedBatchBytes } from './offThreadSha256';

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** Hands `data` over in batches of `size` bytes (at most BATCH_BYTES), each filled in two parts. */
async function updateAll(hash: OffThreadSha256, data: Buffer, size: number): Promise<void> {
  for (let at = 0; at < data.length; at += size) {
    const part = data.subarray(at, Math.min(data.length, at + size));
    const batch = hash.batch();
    const half = Math.floor(part.length / 2);
    part.subarray(0, half).copy(batch, 0);
    part.subarray(half).copy(batch, half);
    await hash.update(batch.subarray(0, part.length));
  }
}

test('hashes batches on the other thread exactly as createHash does, for any split', async () => {
  const data = randomBytes(5 * BATCH_BYTES + 123);
  for (const size of [4096, 65_536, BATCH_BYTES - 7, BATCH_BYTES]) {
    const hash = new OffThreadSha256();
    await updateAll(hash, data, size);
    expect(await hash.digest()).toBe(sha256(data));
  }
});

test('nothing handed over is the hash of nothing; sessions run side by side', async () => {
  const [a, b, empty] = [new OffThreadSha256(), new OffThreadSha256(), new OffThreadSha256()];
  const x = randomBytes(100_000);
  const y = randomBytes(3 * BATCH_BYTES + 1);
  await Promise.all([updateAll(a, x, BATCH_BYTES), updateAll(b, y, BATCH_BYTES)]);
  expect(await Promise.all([a.digest(), b.digest(), empty.digest()])).toEqual([
    sha256(x),
    sha256(y),
    sha256(Buffer.alloc(0)),
  ]);
});

test('a batch is handed over once, by the session that gave it, and only from its start', async () => {
  const hash = new OffThreadSha256();
  const other = new OffThreadSha256();
  const batch = hash.batch();
  batch.write('abc');
  await hash.update(batch.subarray(0, 3));
  await expect(hash.update(batch.subarray(0, 3))).rejects.toThrow('a batch its session gave, once');
  await expect(hash.update(other.batch())).rejects.toThrow('a batch its session gave, once');
  await expect(hash.update(hash.batch().subarray(1, 2))).rejects.toThrow('a batch its session gave, once');
  await expect(hash.update(Buffer.from('not batch memory'))).rejects.toThrow(
    'a batch its session gave, once',
  );
  expect(await hash.digest()).toBe(sha256(Buffer.from('abc')));
  other.abort();
});

test('an aborted session can no longer be used, and others go on', async () => {
  const aborted = new OffThreadSha256();
  const other = new OffThreadSha256();
  await updateAll(aborted, Buffer.from('partial'), BATCH_BYTES);
  aborted.abort();
  await expect(aborted.digest()).rejects.toThrow('after digest or abort');
  expect(() => aborted.batch()).toThrow('after digest or abort');
  await updateAll(other, Buffer.from('whole'), BATCH_BYTES);
  expect(await other.digest()).toBe(sha256(Buffer.from('whole')));
});

test('batch memory comes back once hashed, and is given again (nothing is allocated per batch)', async () => {
  const hash = new OffThreadSha256();
  const first = hash.batch();
  await hash.update(first.subarray(0, 10));
  expect(await hash.digest()).toBe(sha256(first.subarray(0, 10)));
  const next = new OffThreadSha256();
  const again = [next.batch(), next.batch()];
  expect(again.some((batch) => batch.buffer === first.buffer && batch.byteOffset === first.byteOffset)).toBe(
    true,
  );
  next.abort();
});

test('batches given and never handed over come back when their session ends; memory beyond the first arena is let go', async () => {
  const warm = new OffThreadSha256();
  warm.batch();
  warm.abort();
  const kept = sharedBatchBytes();
  expect(kept).toBeGreaterThan(0);
  for (const end of ['abort', 'digest'] as const) {
    const hash = new OffThreadSha256();
    // More than one arena holds, given out at once (as an upload failing mid-way holds its batches).
    const batches = Array.from({ length: 40 }, () => hash.batch());
    const memories = [...new Set(batches.map((batch) => batch.buffer))];
    const places = new Set(batches.map((batch) => `${memories.indexOf(batch.buffer)}:${batch.byteOffset}`));
    expect(places.size).toBe(40); // no two share memory
    expect(sharedBatchBytes()).toBeGreaterThan(kept);
    if (end === 'abort') hash.abort();
    else await hash.digest();
    expect(sharedBatchBytes()).toBe(kept);
  }
  // Every batch is free again: a new session is given the first arena's memory.
  const after = new OffThreadSha256();
  expect(after.batch().byteOffset % BATCH_BYTES).toBe(0);
  after.abort();
});

test('a whole batch starts on a page and may be written with O_DIRECT; a short one or other memory may not', () => {
  const hash = new OffThreadSha256();
  const batch = hash.batch();
  expect(batch.length).toBe(BATCH_BYTES);
  // Shared WebAssembly memory is what gives page alignment; node has it unless run --jitless.
  expect(directWritable(batch)).toBe(true);
  expect(directWritable(batch.subarray(0, 8192))).toBe(true);
  expect(directWritable(batch.subarray(0, 1000))).toBe(false);
  expect(directWritable(Buffer.alloc(BATCH_BYTES))).toBe(false);
  hash.abort();
});
