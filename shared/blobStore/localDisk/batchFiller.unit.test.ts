import { randomBytes } from 'node:crypto';
import { BatchFiller } from './batchFiller';

const BATCH = 1000;

/** Batches from a pool, handed-on ones recorded (copied: a batch is reused once given back). */
function filler(options: { asyncTake?: boolean; slowHandOn?: boolean } = {}) {
  const handedOn: Buffer[] = [];
  let taken = 0;
  let handing = 0;
  let maxHanding = 0;
  const take = () => {
    taken += 1;
    const batch = Buffer.alloc(BATCH, 0xee);
    return options.asyncTake ? Promise.resolve(batch) : batch;
  };
  const handOn = async (batch: Buffer): Promise<void> => {
    handing += 1;
    maxHanding = Math.max(maxHanding, handing);
    if (options.slowHandOn) await new Promise((resolve) => setImmediate(resolve));
    handedOn.push(Buffer.from(batch));
    handing -= 1;
  };
  return {
    batches: new BatchFiller(take, handOn),
    handedOn,
    taken: () => taken,
    maxHanding: () => maxHanding,
  };
}

/** `bytes` cut into chunks of the given sizes, repeated. */
function chunksOf(bytes: Buffer, sizes: readonly number[]): Buffer[] {
  const chunks: Buffer[] = [];
  for (let at = 0, i = 0; at < bytes.length; i += 1) {
    const n = Math.min(sizes[i % sizes.length]!, bytes.length - at);
    chunks.push(bytes.subarray(at, at + n));
    at += n;
  }
  return chunks;
}

describe('BatchFiller', () => {
  test.each([
    ['smaller than a batch', [333]],
    ['exactly a batch', [BATCH]],
    ['larger than a batch', [2_345]],
    ['of mixed sizes, some empty', [1, 0, 999, 1000, 1001, 7, 0, 4_000]],
  ])('chunks %s become whole batches in order, only the last one short', async (_name, sizes) => {
    for (const options of [{}, { asyncTake: true, slowHandOn: true }]) {
      const { batches, handedOn, taken, maxHanding } = filler(options);
      const bytes = randomBytes(7_654);
      for (const chunk of chunksOf(bytes, sizes)) await batches.push(chunk);
      expect(batches.pending).toBe(654);
      await batches.flush();
      expect(batches.pending).toBe(0);
      expect(handedOn.map((b) => b.length)).toEqual([1000, 1000, 1000, 1000, 1000, 1000, 1000, 654]);
      expect(Buffer.concat(handedOn).equals(bytes)).toBe(true);
      expect(taken()).toBe(8);
      // push resolves only once what it filled is handed on: one hand-on at a time.
      expect(maxHanding()).toBe(1);
    }
  });

  test('a batch is taken only when bytes come for it; flush with nothing pending hands on nothing', async () => {
    const { batches, handedOn, taken } = filler();
    await batches.flush();
    await batches.push(Buffer.alloc(0));
    expect(taken()).toBe(0);
    await batches.push(randomBytes(BATCH));
    expect(taken()).toBe(1);
    await batches.flush();
    expect(handedOn.map((b) => b.length)).toEqual([BATCH]);
  });

  test('limitNextBatch makes the next batch short (an O_DIRECT alignment), then whole batches follow', async () => {
    const { batches, handedOn } = filler();
    const bytes = randomBytes(2_500);
    batches.limitNextBatch(300);
    for (const chunk of chunksOf(bytes, [128])) await batches.push(chunk);
    await batches.flush();
    expect(handedOn.map((b) => b.length)).toEqual([300, 1000, 1000, 200]);
    expect(Buffer.concat(handedOn).equals(bytes)).toBe(true);
    // More than a batch: a batch at most.
    const second = filler();
    second.batches.limitNextBatch(5_000);
    await second.batches.push(randomBytes(1_500));
    await second.batches.flush();
    expect(second.handedOn.map((b) => b.length)).toEqual([1000, 500]);
  });

  test('limitNextBatch is refused once the batch being filled has bytes, and for no bytes', async () => {
    const { batches } = filler();
    expect(() => batches.limitNextBatch(0)).toThrow('0 bytes');
    await batches.push(randomBytes(10));
    expect(() => batches.limitNextBatch(100)).toThrow('has bytes already');
  });

  test('a failing hand-on rejects the push that filled the batch', async () => {
    const batches = new BatchFiller(
      () => Buffer.alloc(BATCH),
      () => Promise.reject(new Error('EIO: the disk went away')),
    );
    await batches.push(randomBytes(999));
    await expect(batches.push(randomBytes(2))).rejects.toThrow('EIO');
  });
});

describe('BatchFiller.pushSync', () => {
  test.each([
    ['smaller than a batch', [333]],
    ['exactly a batch', [BATCH]],
    ['of mixed sizes, some empty', [1, 0, 999, 1000, 1001, 7, 0, 4_000]],
  ])(
    'chunks %s: copied at once while they fit, a promise only where a batch is taken or fills',
    async (_name, sizes) => {
      for (const options of [{}, { asyncTake: true, slowHandOn: true }]) {
        const { batches, handedOn, taken } = filler(options);
        const bytes = randomBytes(7_654);
        let promises = 0;
        for (const chunk of chunksOf(bytes, sizes)) {
          const before = batches.pending;
          const pending = batches.pushSync(chunk);
          if (pending === undefined) {
            // Taken whole, in the batch being filled, which it did not fill.
            expect(batches.pending).toBe(before + chunk.length);
            expect(batches.pending).toBeLessThan(BATCH);
          } else {
            promises += 1;
            await pending;
          }
        }
        await batches.flush();
        expect(Buffer.concat(handedOn).equals(bytes)).toBe(true);
        expect(handedOn.slice(0, -1).every((batch) => batch.length === BATCH)).toBe(true);
        expect(taken()).toBe(8);
        // At most one promise per batch taken plus one per batch filled.
        expect(promises).toBeLessThanOrEqual(16);
      }
    },
  );
});
