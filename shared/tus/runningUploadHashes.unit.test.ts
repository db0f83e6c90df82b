import { createHash, randomBytes } from 'node:crypto';
import { Readable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { RunningUploadHashes } from './runningUploadHashes';

const ID = 'a';

async function feed(tap: Transform | undefined, bytes: Buffer): Promise<void> {
  if (!tap) throw new Error('no tap');
  await pipeline(Readable.from([bytes.subarray(0, 3000), bytes.subarray(3000)]), tap, async (out) => {
    for await (const chunk of out) void chunk;
  });
}

describe('RunningUploadHashes', () => {
  test('bytes fed in order over several writes give the digest of the whole', async () => {
    const hashes = new RunningUploadHashes();
    const bytes = randomBytes(5 * 1024 * 1024 + 17);
    const cut = 4 * 1024 * 1024 + 5;
    await feed(hashes.tap(ID, 0), bytes.subarray(0, cut));
    await feed(hashes.tap(ID, cut), bytes.subarray(cut));
    expect(await hashes.take(ID, bytes.length)).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(await hashes.take(ID, bytes.length)).toBeUndefined();
  });

  test('a write at another offset than the bytes seen drops it: no digest, no tap mid-file', async () => {
    const hashes = new RunningUploadHashes();
    await feed(hashes.tap(ID, 0), randomBytes(5000));
    expect(hashes.tap(ID, 4000)).toBeUndefined();
    expect(await hashes.take(ID, 5000)).toBeUndefined();
  });

  test('not all bytes seen: no digest; beyond capacity the oldest is dropped', async () => {
    const hashes = new RunningUploadHashes(1);
    await feed(hashes.tap(ID, 0), randomBytes(5000));
    expect(await hashes.take(ID, 6000)).toBeUndefined();
    await feed(hashes.tap('x', 0), randomBytes(10));
    await feed(hashes.tap('y', 0), randomBytes(10));
    expect(await hashes.take('x', 10)).toBeUndefined();
    expect(await hashes.take('y', 10)).toMatch(/^[0-9a-f]{64}$/);
  });
});
