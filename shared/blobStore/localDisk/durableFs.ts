import { constants } from 'node:fs';
import { open, unlink, type FileHandle } from 'node:fs/promises';

/** FileHandle.write may write fewer bytes than asked: loop until all of `chunk` is at `position`. */
export async function writeAllAt(
  handle: Pick<FileHandle, 'write'>,
  chunk: Buffer,
  position: number,
): Promise<void> {
  let offset = 0;
  while (offset < chunk.length) {
    const { bytesWritten } = await handle.write(chunk, offset, chunk.length - offset, position + offset);
    offset += bytesWritten;
  }
}

export async function writeFileDurably(file: string, text: string): Promise<void> {
  const handle = await open(file, 'wx', 0o644);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** A created or renamed entry survives a crash only once the directory holding it is flushed too. */
export async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export async function removeIfPresent(file: string): Promise<void> {
  try {
    await unlink(file);
  } catch (err) {
    if (!isAbsentEntry(err)) throw err;
  }
}

/** ENOTDIR/EISDIR: a key whose path crosses or names a directory of other keys is simply absent. */
export function isAbsentEntry(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR';
}

/**
 * A file opened again with O_DIRECT, for the writes that bypass the page cache; undefined
 * where the platform (no O_DIRECT outside Linux) or the file system (EINVAL) has none.
 */
export async function openForDirectWrites(file: string): Promise<FileHandle | undefined> {
  const { O_DIRECT, O_WRONLY } = constants;
  if (O_DIRECT === undefined) return undefined;
  try {
    return await open(file, O_WRONLY | O_DIRECT);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EINVAL') return undefined;
    throw error;
  }
}
