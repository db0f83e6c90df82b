import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { BATCH_BYTES } from '#shared/blobStore/offThreadSha256';
import { createLocalDiskBlobStore } from '#shared/blobStore/localDisk/createLocalDiskBlobStore';
import { TEMP_FILE_PATTERN } from '#shared/blobStore/localDisk/blobPaths';
import { SMALL_BODY_BYTES } from '#shared/blobStore/localDisk/writeBlobFile';
import { waitFor } from '#tests/support/waitFor';
import { describeBlobStoreContract } from './blobStore.contract';

let rootDir: string;

beforeAll(async () => {
  rootDir = await mkdtemp(path.join(tmpdir(), 'blobstore-local-'));
});

afterAll(async () => {
  await rm(rootDir, { recursive: true, force: true });
});

/** Every regular file below dir, relative to the root. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(rootDir, path.join(entry.parentPath, entry.name)));
}

// A failed put leaves no file under its prefix, and no temp file anywhere in the tree.
const leftovers = async (prefix: string): Promise<string[]> => {
  const underPrefix = await filesUnder(path.join(rootDir, prefix));
  const tempFiles = (await filesUnder(rootDir)).filter((file) => TEMP_FILE_PATTERN.test(file));
  return [...new Set([...underPrefix, ...tempFiles])];
};

/** The temp file a put killed mid-way leaves next to its target. */
const leaveLeftover = async (prefix: string) => {
  const dir = path.join(rootDir, prefix);
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `killed.bin~${randomBytes(8).toString('hex')}.tmp`);
  await writeFile(file, randomBytes(3000));
  return { touch: () => appendFile(file, randomBytes(10)) };
};

describeBlobStoreContract('local disk', {
  create: () => createLocalDiskBlobStore({ rootDir }),
  leftovers,
  leaveLeftover,
});
describeBlobStoreContract('local disk, every byte through the page cache (BLOB_DIRECT_IO=false)', {
  create: () => createLocalDiskBlobStore({ rootDir, directIo: false }),
  leftovers,
  leaveLeftover,
});

/** Flags (octal in /proc) of this process's open descriptors on files whose path includes `part`. */
async function openFlagsOf(part: string): Promise<number[]> {
  const flags: number[] = [];
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
    if (!target.includes(part)) continue;
    const info = await readFile(`/proc/self/fdinfo/${fd}`, 'utf8').catch(() => '');
    const match = /^flags:\s+([0-7]+)$/m.exec(info);
    if (match) flags.push(parseInt(match[1]!, 8));
  }
  return flags;
}

describe.each([true, false])('streaming into a file (directIo %s)', (directIo) => {
  const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

  test.each([
    0,
    1,
    4095,
    4096,
    SMALL_BODY_BYTES,
    SMALL_BODY_BYTES + 1,
    BATCH_BYTES - 1,
    BATCH_BYTES,
    BATCH_BYTES + 1,
    3 * BATCH_BYTES + 4096 + 17,
  ])('%i bytes in chunks of random sizes land whole, with their SHA-256', async (size) => {
    const store = createLocalDiskBlobStore({ rootDir, directIo });
    const data = randomBytes(size);
    const chunks: Buffer[] = [];
    for (let at = 0; at < size;) {
      const n = Math.min(size - at, 1 + Math.floor(Math.random() * 200_000));
      chunks.push(data.subarray(at, at + n));
      at += n;
    }
    const key = `streamed/${directIo}/${size}`;
    const put = await store.put(key, Readable.from(chunks));
    expect(put).toEqual({ key, size, sha256: sha256(data) });
    expect((await readFile(path.join(rootDir, key))).equals(data)).toBe(true);
  });

  const linux = process.platform === 'linux' ? test : test.skip;
  linux(`the file is ${directIo ? '' : 'not '}also open with O_DIRECT while it is written`, async () => {
    const store = createLocalDiskBlobStore({ rootDir, directIo });
    const body = new Readable({ read() {} });
    const key = `watched/${directIo}`;
    const put = store.put(key, body);
    body.push(randomBytes(2 * BATCH_BYTES));
    // The file is opened once for the page cache and, with directIo, once more with O_DIRECT.
    const descriptors = directIo ? 2 : 1;
    const flags = await waitFor(`${descriptors} open descriptors of the file`, () => openFlagsOf('watched'), {
      timeoutMs: 1000,
      intervalMs: 10,
      until: (open) => open.length >= descriptors,
    }).catch(() => openFlagsOf('watched')); // the assertions below say what is missing
    body.push(null);
    await put;
    const direct = flags.filter((flag) => (flag & constants.O_DIRECT) !== 0);
    expect(flags).toHaveLength(descriptors);
    expect(direct).toHaveLength(directIo ? 1 : 0);
  });

  linux(
    'a body that ends within SMALL_BODY_BYTES opens no file before it ends (then one write, no O_DIRECT)',
    async () => {
      const store = createLocalDiskBlobStore({ rootDir, directIo });
      const body = new Readable({ read() {} });
      const key = `small/${directIo}`;
      const put = store.put(key, body);
      body.push(randomBytes(1000));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const whileOpen = await openFlagsOf('small'); // nothing is opened before the body ends
      body.push(null);
      await put;
      expect(whileOpen).toEqual([]);
      expect((await readFile(path.join(rootDir, key))).length).toBe(1000);
    },
  );
});

describe('small blobs (written whole by one job on a small-blob thread)', () => {
  test('puts at once land whole, each with its sidecar, and leave no temp file', async () => {
    const store = createLocalDiskBlobStore({ rootDir });
    const bodies = Array.from({ length: 40 }, (_, n) => randomBytes(n * 97));
    const puts = await Promise.all(
      bodies.map((bytes, n) =>
        store.put(`many/${n % 3}/${n}.png`, Readable.from([bytes]), { contentType: 'image/png' }),
      ),
    );
    expect(puts.map((put) => put.size)).toEqual(bodies.map((bytes) => bytes.length));
    for (const [n, bytes] of bodies.entries()) {
      expect((await readFile(path.join(rootDir, `many/${n % 3}/${n}.png`))).equals(bytes)).toBe(true);
      expect(await store.stat(`many/${n % 3}/${n}.png`)).toEqual({
        key: `many/${n % 3}/${n}.png`,
        size: bytes.length,
        contentType: 'image/png',
      });
    }
    expect((await filesUnder(path.join(rootDir, 'many'))).filter((f) => TEMP_FILE_PATTERN.test(f))).toEqual(
      [],
    );
  });

  test("a put that fails before its files are made fails with fs's error and leaves nothing", async () => {
    const store = createLocalDiskBlobStore({ rootDir });
    await store.put('blocked', Readable.from([Buffer.from('a file where a directory would go')]));
    const failed = store.put('blocked/inner.png', Readable.from([Buffer.from('png')]));
    await expect(failed).rejects.toMatchObject({ code: expect.stringMatching(/^(ENOTDIR|EEXIST)$/) });
    expect((await filesUnder(rootDir)).filter((f) => f.startsWith('blocked'))).toEqual([
      'blocked',
      'blocked~meta.json',
    ]);
  });

  test('a put whose data cannot be renamed into place removes its sidecar and temp files', async () => {
    const store = createLocalDiskBlobStore({ rootDir });
    // A directory holds the data file's name: the sidecar's rename succeeds, the data's fails.
    await mkdir(path.join(rootDir, 'taken/x.png/child'), { recursive: true });
    const failed = store.put('taken/x.png', Readable.from([Buffer.from('png')]), {
      contentType: 'image/png',
    });
    await expect(failed).rejects.toMatchObject({
      code: expect.stringMatching(/^(EISDIR|ENOTEMPTY|EEXIST)$/),
    });
    // No file at all under it: neither the sidecar renamed into place nor a temp file.
    expect(await filesUnder(path.join(rootDir, 'taken'))).toEqual([]);
  });
});

describe('local disk specifics', () => {
  test('a blob is one file at its key plus a JSON sidecar holding the content type', async () => {
    const store = createLocalDiskBlobStore({ rootDir });
    await store.put('layout/7/a.png', Readable.from([Buffer.from('png bytes')]), {
      contentType: 'image/png',
    });
    expect((await filesUnder(path.join(rootDir, 'layout'))).sort()).toEqual([
      'layout/7/a.png',
      'layout/7/a.png~meta.json',
    ]);
  });

  test('a blob whose sidecar went missing is still served, as octet-stream', async () => {
    const store = createLocalDiskBlobStore({ rootDir });
    await store.put('layout/no-sidecar.bin', Readable.from([Buffer.from('abc')]), {
      contentType: 'text/plain',
    });
    await rm(path.join(rootDir, 'layout/no-sidecar.bin~meta.json'));
    expect(await store.stat('layout/no-sidecar.bin')).toEqual({
      key: 'layout/no-sidecar.bin',
      size: 3,
      contentType: 'application/octet-stream',
    });
  });

  test('a sidecar whose blob is gone is a leftover; one beside its blob is not', async () => {
    const store = createLocalDiskBlobStore({ rootDir });
    await store.put('sidecars/kept.png', Readable.from([Buffer.from('png')]), { contentType: 'image/png' });
    await store.put('sidecars/half-deleted.png', Readable.from([Buffer.from('png')]));
    // What a delete killed between its two unlinks leaves.
    await rm(path.join(rootDir, 'sidecars/half-deleted.png'));

    const leftovers = [];
    for await (const leftover of store.listLeftovers())
      if (leftover.id.startsWith('sidecars/')) leftovers.push(leftover);

    expect(leftovers.map((leftover) => leftover.id)).toEqual(['sidecars/half-deleted.png~meta.json']);
    expect(await store.removeLeftover(leftovers[0]!)).toBe(true);
    expect((await filesUnder(path.join(rootDir, 'sidecars'))).sort()).toEqual([
      'sidecars/kept.png',
      'sidecars/kept.png~meta.json',
    ]);
  });

  test('removeLeftover refuses what is not a leftover of the store', async () => {
    const store = createLocalDiskBlobStore({ rootDir });
    await store.put('refused/blob.bin', Readable.from([Buffer.from('x')]));
    const touchedAt = new Date(Date.now() + 60_000);
    for (const id of ['refused/blob.bin', '../outside~0123456789abcdef.tmp', 'refused/../x~meta.json'])
      await expect(store.removeLeftover({ id, size: 1, touchedAt })).rejects.toBeInstanceOf(RangeError);
    // A sidecar beside its blob is part of the blob.
    expect(await store.removeLeftover({ id: 'refused/blob.bin~meta.json', size: 1, touchedAt })).toBe(false);
    expect(await store.stat('refused/blob.bin')).toBeDefined();
  });

  test('a key naming a directory of other keys is absent, not an error', async () => {
    const store = createLocalDiskBlobStore({ rootDir });
    await store.put('nested/dir/leaf', Readable.from([Buffer.from('x')]));
    expect(await store.stat('nested/dir')).toBeUndefined();
    await expect(store.get('nested/dir')).rejects.toThrow('no blob nested/dir');
    await expect(store.delete('nested/dir')).resolves.toBeUndefined();
  });

  test('ping creates a missing root and fails when the root cannot be a directory', async () => {
    const fresh = path.join(rootDir, 'fresh-root', 'deeper');
    await expect(createLocalDiskBlobStore({ rootDir: fresh }).ping()).resolves.toBeUndefined();
    const notADir = path.join(rootDir, 'plain-file');
    await writeFile(notADir, 'x');
    await expect(createLocalDiskBlobStore({ rootDir: notADir }).ping()).rejects.toThrow();
  });
});
