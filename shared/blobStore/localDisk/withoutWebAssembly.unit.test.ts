import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { BATCH_BYTES, OffThreadSha256, directWritable } from '#shared/blobStore/offThreadSha256';
import { streamIntoFile } from './writeBlobFile';

// As under `node --jitless`, or once WebAssembly memory is refused: batch memory is then plain
// shared memory, which need not start on a page, so nothing may be written with O_DIRECT. (Batch
// memory is made at the first batch, after this file's beforeAll.)
const wasm = Object.getOwnPropertyDescriptor(globalThis, 'WebAssembly');
beforeAll(() => {
  Object.defineProperty(globalThis, 'WebAssembly', { value: undefined, configurable: true });
});
afterAll(() => {
  if (wasm) Object.defineProperty(globalThis, 'WebAssembly', wasm);
});

test('without WebAssembly, batches are plain shared memory, written through the page cache and hashed the same', async () => {
  const hash = new OffThreadSha256();
  const batch = hash.batch();
  expect(batch.length).toBe(BATCH_BYTES);
  expect(directWritable(batch)).toBe(false);
  hash.abort();

  const dir = await mkdtemp(path.join(tmpdir(), 'no-wasm-'));
  try {
    const data = randomBytes(2 * BATCH_BYTES + 12_345);
    const file = path.join(dir, 'blob');
    const chunks = [data.subarray(0, 100_000), data.subarray(100_000)];
    expect(await streamIntoFile(Readable.from(chunks), file, { directIo: true })).toEqual({
      size: data.length,
      sha256: createHash('sha256').update(data).digest('hex'),
    });
    expect((await readFile(file)).equals(data)).toBe(true);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
