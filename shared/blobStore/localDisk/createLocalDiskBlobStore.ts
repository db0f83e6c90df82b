import { constants } from 'node:fs';
import { access, mkdir, open, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import {
  BlobNotFoundError,
  type BlobInfo,
  type BlobStore,
  type PutOptions,
  type PutResult,
} from '#shared/blobStore/blobStore';
import { assertValidRange, rangeNotSatisfiable, type ByteRange } from '#shared/blobStore/byteRange';
import { blobPaths } from './blobPaths';
import { isAbsentEntry, removeIfPresent } from './durableFs';
import { listLocalBlobs, listLocalLeftovers, removeLocalLeftover } from './listLocalBlobs';
import { readContentType } from './readBlobMeta';
import { writeBlobFile } from './writeBlobFile';

export interface LocalDiskBlobStoreOptions {
  /** Created on the first put or ping if missing. */
  readonly rootDir: string;
  /**
   * Write uploads around the page cache (O_DIRECT) where the file system allows; default true.
   * Off: every byte goes through the page cache, as for a file system that takes O_DIRECT but is
   * slow with it.
   */
  readonly directIo?: boolean;
}

/** BlobStore on a local directory: one file per key, plus a small JSON sidecar for the content type. */
export function createLocalDiskBlobStore(options: LocalDiskBlobStoreOptions): BlobStore {
  const rootDir = path.resolve(options.rootDir);
  const directIo = options.directIo ?? true;
  return {
    put: (key, body, putOptions) => put(rootDir, key, body, directIo, putOptions),
    stat: (key) => statBlob(rootDir, key),
    get: (key, range) => getBlob(rootDir, key, range),
    delete: (key) => deleteBlob(rootDir, key),
    list: (prefix) => listLocalBlobs(rootDir, prefix),
    listLeftovers: () => listLocalLeftovers(rootDir),
    removeLeftover: (leftover) => removeLocalLeftover(rootDir, leftover),
    ping: () => ping(rootDir),
  };
}

async function put(
  rootDir: string,
  key: string,
  body: Readable,
  directIo: boolean,
  options: PutOptions = {},
): Promise<PutResult> {
  let paths;
  try {
    paths = blobPaths(rootDir, key);
  } catch (err) {
    body.destroy();
    throw err;
  }
  const written = await writeBlobFile(paths, body, options, directIo);
  return { key, ...written };
}

async function statBlob(rootDir: string, key: string): Promise<BlobInfo | undefined> {
  const paths = blobPaths(rootDir, key);
  try {
    const stats = await stat(paths.data);
    if (!stats.isFile()) return undefined;
    return { key, size: stats.size, contentType: await readContentType(paths.meta) };
  } catch (err) {
    if (isAbsentEntry(err)) return undefined;
    throw err;
  }
}

async function getBlob(rootDir: string, key: string, range?: ByteRange): Promise<Readable> {
  const paths = blobPaths(rootDir, key);
  if (range) assertValidRange(range);
  let handle;
  try {
    handle = await open(paths.data, 'r');
  } catch (err) {
    if (isAbsentEntry(err)) throw new BlobNotFoundError(key);
    throw err;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new BlobNotFoundError(key);
    if (range && range.start >= stats.size) throw rangeNotSatisfiable(range, stats.size);
    // The stream owns the handle from here on and closes it when it ends or is destroyed.
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  } catch (err) {
    await handle.close();
    throw err;
  }
}

async function deleteBlob(rootDir: string, key: string): Promise<void> {
  const paths = blobPaths(rootDir, key);
  await removeIfPresent(paths.data);
  await removeIfPresent(paths.meta);
}

async function ping(rootDir: string): Promise<void> {
  await mkdir(rootDir, { recursive: true });
  await access(rootDir, constants.W_OK);
}
