import { createHash, randomBytes } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { OffThreadSha256, batchBuffer, sharedBatchBytes } from './offThreadSha256';

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

test('hashes batches on the other thread exactly as createHash does, for any split', async () => {
  const data = randomBytes(5 * 1024 * 1024 + 123);
  for (const size of [4096, 65_536, 1024 * 1024 + 7, 3 * 1024 * 1024]) {
    const hash = new OffThreadSha256();
    for (let at = 0; at < data.length; at += size) {
      const part = data.subarray(at, Math.min(data.length, at + size));
      // Split once more, as a batch of received chunks would be.
      const half = Math.floor(part.length / 2);
      await hash.update(batchBuffer([part.subarray(0, half), part.subarray(half)], part.length));
    }
    expect(await hash.digest()).toBe(sha256(data));
  }
});

test('nothing handed over is the hash of nothing; sessions run side by side', async () => {
  const [a, b, empty] = [new OffThreadSha256(), new OffThreadSha256(), new OffThreadSha256()];
  const x = randomBytes(100_000);
  const y = randomBytes(200_000);
  await Promise.all([a.update(batchBuffer([x], x.length)), b.update(batchBuffer([y], y.length))]);
  expect(await Promise.all([a.digest(), b.digest(), empty.digest()])).toEqual([
    sha256(x),
    sha256(y),
    sha256(Buffer.alloc(0)),
  ]);
});

test('a batch is handed over once, and only batch memory is taken', async () => {
  const hash = new OffThreadSha256();
  const batch = batchBuffer([Buffer.from('abc')], 3);
  await hash.update(batch);
  await expect(hash.update(batch)).rejects.toThrow('batchBuffer');
  await expect(hash.update(batchBuffer([Buffer.from('xy')], 2).subarray(1, 2))).rejects.toThrow(
    'batchBuffer',
  );
  await expect(hash.update(Buffer.from('not pooled memory'))).rejects.toThrow('batchBuffer');
  expect(await hash.digest()).toBe(sha256(Buffer.from('abc')));
});

test('an aborted session can no longer be used, and others go on', async () => {
  const aborted = new OffThreadSha256();
  const other = new OffThreadSha256();
  await aborted.update(batchBuffer([Buffer.from('partial')], 7));
  aborted.abort();
  await expect(aborted.digest()).rejects.toThrow('after digest or abort');
  await other.update(batchBuffer([Buffer.from('whole')], 5));
  expect(await other.digest()).toBe(sha256(Buffer.from('whole')));
});

test('batch memory comes back to the pool once hashed, and a batch larger than the pool is hashed whole', async () => {
  const first = batchBuffer([Buffer.alloc(10, 1)], 10);
  const hash = new OffThreadSha256();
  await hash.update(first);
  const large = randomBytes(5 * 1024 * 1024);
  await hash.update(batchBuffer([large], large.length));
  expect(await hash.digest()).toBe(sha256(Buffer.concat([Buffer.alloc(10, 1), large])));
  // Hashed: the same shared memory is given again (nothing new is allocated per batch).
  const again = [batchBuffer([], 0), batchBuffer([], 0)];
  expect(again.some((batch) => batch.buffer === first.buffer)).toBe(true);
});

test('a batch given out and dropped without being handed over is reclaimed, not kept by the pool', async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const before = sharedBatchBytes();
  // More than the pool keeps, all given out at once, then dropped (as a failed upload drops its batches).
  const giveOutAndDrop = (): number => {
    const batches = Array.from({ length: 40 }, () => batchBuffer([], 0));
    expect(batches).toHaveLength(40);
    return sharedBatchBytes() - before;
  };
  expect(giveOutAndDrop()).toBeGreaterThanOrEqual(20 * 2 * 1024 * 1024);
  const deadline = Date.now() + 10_000;
  while (sharedBatchBytes() > before && Date.now() < deadline) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(sharedBatchBytes()).toBeLessThanOrEqual(before);
});
