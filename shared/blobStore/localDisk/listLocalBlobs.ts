import { opendir, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Stats } from 'node:fs';
import type { Leftover, ListedBlob } from '#shared/blobStore/blobStore';
import { isValidBlobKey } from '#shared/blobStore/blobKey';
import { META_SUFFIX, TEMP_FILE_PATTERN } from './blobPaths';
import { isAbsentEntry } from './durableFs';
import { isTempFileInUse } from './tempFilesInUse';

/** A regular file below the root, by its '/'-separated path relative to the root. */
interface Entry {
  readonly relative: string;
  readonly absolute: string;
}

/** Every blob under the root whose key starts with `prefix`: data files, not sidecars or temp files. */
export async function* listLocalBlobs(rootDir: string, prefix = ''): AsyncIterable<ListedBlob> {
  // Only the directory the prefix names down to its last '/' needs walking.
  const start = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
  if (start !== '' && !isValidBlobKey(start)) return;
  for await (const entry of regularFiles(rootDir, start)) {
    const key = entry.relative;
    if (!key.startsWith(prefix) || isPartOfAWrite(key) || !isValidBlobKey(key)) continue;
    const stats = await statIfPresent(entry.absolute);
    if (stats) yield { key, size: stats.size, storedAt: lastTouched(stats) };
  }
}

/** Temp files no put of this thread is writing, and sidecars whose data file is gone. */
export async function* listLocalLeftovers(rootDir: string): AsyncIterable<Leftover> {
  for await (const entry of regularFiles(rootDir, '')) {
    if (!(await isLeftover(entry.absolute))) continue;
    const stats = await statIfPresent(entry.absolute);
    if (stats) yield { id: entry.relative, size: stats.size, touchedAt: lastTouched(stats) };
  }
}

/**
 * Unlinks a leftover unless it was touched since it was listed, or has become part of a blob again
 * (a sidecar whose data file a put has since renamed into place).
 */
export async function removeLocalLeftover(rootDir: string, leftover: Leftover): Promise<boolean> {
  const segments = leftover.id.split('/');
  if (!isPartOfAWrite(leftover.id) || segments.some((s) => !/^[A-Za-z0-9._~-]+$/.test(s) || /^\.+$/.test(s)))
    throw new RangeError(`not a leftover of this store: ${JSON.stringify(leftover.id)}`);
  const file = path.join(rootDir, ...segments);
  const stats = await statIfPresent(file);
  if (!stats || lastTouched(stats) > leftover.touchedAt || !(await isLeftover(file))) return false;
  try {
    await unlink(file);
    return true;
  } catch (error) {
    if (isAbsentEntry(error)) return false;
    throw error;
  }
}

function isPartOfAWrite(relative: string): boolean {
  return TEMP_FILE_PATTERN.test(relative) || relative.endsWith(META_SUFFIX);
}

async function isLeftover(file: string): Promise<boolean> {
  if (TEMP_FILE_PATTERN.test(file)) return !isTempFileInUse(file);
  if (!file.endsWith(META_SUFFIX)) return false;
  return (await statIfPresent(file.slice(0, -META_SUFFIX.length))) === undefined;
}

/** A rename into place changes ctime, not mtime: the later of the two is when the file last changed. */
function lastTouched(stats: Stats): Date {
  return new Date(Math.max(stats.mtimeMs, stats.ctimeMs));
}

async function statIfPresent(file: string): Promise<Stats | undefined> {
  try {
    const stats = await stat(file);
    return stats.isFile() ? stats : undefined;
  } catch (error) {
    if (isAbsentEntry(error)) return undefined;
    throw error;
  }
}

/** Walks one directory at a time (opendir), so a large tree is never held in memory whole. */
async function* regularFiles(rootDir: string, relativeDir: string): AsyncIterable<Entry> {
  const absoluteDir = path.join(rootDir, ...relativeDir.split('/').filter(Boolean));
  let dir;
  try {
    dir = await opendir(absoluteDir);
  } catch (error) {
    if (isAbsentEntry(error)) return;
    throw error;
  }
  const subdirs: string[] = [];
  for await (const dirent of dir) {
    const relative = relativeDir === '' ? dirent.name : `${relativeDir}/${dirent.name}`;
    if (dirent.isDirectory()) subdirs.push(relative);
    else if (dirent.isFile()) yield { relative, absolute: path.join(absoluteDir, dirent.name) };
  }
  for (const subdir of subdirs) yield* regularFiles(rootDir, subdir);
}
