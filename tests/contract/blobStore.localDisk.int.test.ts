import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createLocalDiskBlobStore } from '../../shared/blobStore/localDisk/createLocalDiskBlobStore';
import { TEMP_FILE_PATTERN } from '../../shared/blobStore/localDisk/blobPaths';
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

describeBlobStoreContract('local disk', {
  create: () => createLocalDiskBlobStore({ rootDir }),
  // A failed put leaves no file under its prefix, and no temp file anywhere in the tree.
  leftovers: async (prefix) => {
    const underPrefix = await filesUnder(path.join(rootDir, prefix));
    const tempFiles = (await filesUnder(rootDir)).filter((file) => TEMP_FILE_PATTERN.test(file));
    return [...new Set([...underPrefix, ...tempFiles])];
  },
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
