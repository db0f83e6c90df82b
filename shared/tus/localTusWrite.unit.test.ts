import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { writeTusBody } from './localTusWrite';
import { RunningUploadHashes } from './runningUploadHashes';
import { readRequestBody } from './tusRequestBody';

const MiB = 1024 * 1024;
const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** A body arriving in chunks of odd sizes (as from a socket), optionally failing after `failAfter` bytes. */
function body(bytes: Buffer, failAfter?: number): Readable {
  let at = 0;
  return new Readable({
    read() {
      if (failAfter !== undefined && at >= failAfter) return void this.destroy(new Error('connection reset'));
      if (at >= bytes.length) return void this.push(null);
      const n = Math.min(65_519, bytes.length - at, (failAfter ?? Number.POSITIVE_INFINITY) - at);
      this.push(bytes.subarray(at, at + n));
      at += n;
    },
  });
}

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tus-write-'));
  file = path.join(dir, 'upload');
  writeFileSync(file, ''); // the file store creates it empty
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe.each([true, false])('writeTusBody (O_DIRECT %s)', (directIo) => {
  test('PATCHes at odd offsets store every byte in place, and the running hash is the whole upload', async () => {
    const hashes = new RunningUploadHashes();
    const bytes = randomBytes(11 * MiB + 12_345);
    // Crossing batches, then resumed at offsets no O_DIRECT write may start at.
    const cuts = [0, 5 * MiB + 3, 5 * MiB + 4099, 9 * MiB + 1, bytes.length];
    for (let i = 0; i + 1 < cuts.length; i += 1) {
      const [from, to] = [cuts[i]!, cuts[i + 1]!];
      const hash = hashes.follow('u', from);
      expect(hash).toBeDefined();
      const written = await writeTusBody(body(bytes.subarray(from, to)), file, from, { directIo, hash });
      expect(written).toEqual({ bytes: to - from, checksum: undefined });
      expect(statSync(file).size).toBe(to);
    }
    expect(sha256(readFileSync(file))).toBe(sha256(bytes));
    expect(await hashes.take('u', bytes.length)).toBe(sha256(bytes));
  });

  test("a request body taken in its 'data' events (readRequestBody), at odd offsets: every byte in place, the whole upload's hash", async () => {
    const hashes = new RunningUploadHashes();
    const bytes = randomBytes(13 * MiB + 4_321);
    const cuts = [0, 4 * MiB + 17, 9 * MiB + 4096, bytes.length];
    for (let i = 0; i + 1 < cuts.length; i += 1) {
      const [from, to] = [cuts[i]!, cuts[i + 1]!];
      const request = new PassThrough({ highWaterMark: 16 * 1024 });
      const written = writeTusBody(
        (take) => readRequestBody(request, new AbortController().signal, to - from, take),
        file,
        from,
        { directIo, hash: hashes.follow('u', from) },
      );
      // Odd chunk sizes, sent as a socket would: waiting for 'drain' when the request is paused.
      for (let at = from; at < to;) {
        const n = Math.min(65_519, to - at);
        if (!request.write(bytes.subarray(at, at + n)))
          await new Promise((resolve) => request.once('drain', resolve));
        at += n;
      }
      request.end();
      expect((await written).bytes).toBe(to - from);
      expect(statSync(file).size).toBe(to);
    }
    expect(readFileSync(file).equals(bytes)).toBe(true);
    expect(await hashes.take('u', bytes.length)).toBe(sha256(bytes));
  });

  test('a body that fails midway rejects, and the file ends at a byte it has (its size stays the offset)', async () => {
    const bytes = randomBytes(10 * MiB);
    const failAfter = 6 * MiB + 777;
    await expect(writeTusBody(body(bytes, failAfter), file, 0, { directIo })).rejects.toThrow(
      'connection reset',
    );
    const stored = readFileSync(file);
    expect(stored.length).toBeLessThanOrEqual(failAfter);
    expect(stored.length % (4 * MiB)).toBe(0);
    expect(stored.equals(bytes.subarray(0, stored.length))).toBe(true);
  });

  test('a body that ends early (the client went away) is written to its last byte', async () => {
    const bytes = randomBytes(3 * MiB + 5);
    const written = await writeTusBody(body(bytes), file, 0, { directIo });
    expect(written.bytes).toBe(bytes.length);
    expect(readFileSync(file).equals(bytes)).toBe(true);
  });

  test.each(['sha256', 'sha1', 'md5'] as const)(
    "the body's %s checksum is its digest alone, at any offset, beside the running hash of the whole upload",
    async (algorithm) => {
      const hashes = new RunningUploadHashes();
      const bytes = randomBytes(9 * MiB + 77);
      const cuts = [0, 3, 4 * MiB + 4096, bytes.length];
      for (let i = 0; i + 1 < cuts.length; i += 1) {
        const [from, to] = [cuts[i]!, cuts[i + 1]!];
        const written = await writeTusBody(body(bytes.subarray(from, to)), file, from, {
          directIo,
          hash: hashes.follow('u', from),
          checksum: algorithm,
        });
        expect(written.bytes).toBe(to - from);
        expect(written.checksum?.toString('hex')).toBe(
          createHash(algorithm).update(bytes.subarray(from, to)).digest('hex'),
        );
      }
      expect(await hashes.take('u', bytes.length)).toBe(sha256(bytes));
      expect(readFileSync(file).equals(bytes)).toBe(true);
    },
  );

  test('an empty body writes nothing and has the digest of nothing', async () => {
    const written = await writeTusBody(body(Buffer.alloc(0)), file, 0, { directIo, checksum: 'sha256' });
    expect(written).toEqual({ bytes: 0, checksum: createHash('sha256').digest() });
    expect(statSync(file).size).toBe(0);
  });
});

describe('writeTusBody when the disk fails', () => {
  // /dev/full takes the open and refuses every write with ENOSPC, as a full disk does.
  const full = '/dev/full';
  const haveFull = existsSync(full);

  (haveFull ? test : test.skip)(
    'a write that fails rejects the PATCH with its error, after every write handed over has ended',
    async () => {
      const hashes = new RunningUploadHashes();
      const bytes = randomBytes(30 * MiB + 5);
      await expect(
        writeTusBody(body(bytes), full, 0, { directIo: true, hash: hashes.follow('u', 0), checksum: 'md5' }),
      ).rejects.toMatchObject({ code: 'ENOSPC' });
      hashes.forget('u');
      // The hashing thread goes on: the next upload is written and hashed.
      const next = randomBytes(5 * MiB + 3);
      const written = await writeTusBody(body(next), file, 0, { directIo: true, checksum: 'sha256' });
      expect(written.checksum?.toString('hex')).toBe(sha256(next));
      expect(readFileSync(file).equals(next)).toBe(true);
    },
  );
});
