import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { type FileHandle, chmod, mkdir, open, readFile } from 'node:fs/promises';
import path from 'node:path';

/** What the state file records of one scan: done (a brain), or uploaded through tus (not a brain yet). */
export interface ScanRecord {
  readonly key: string;
  readonly identity: string;
  readonly path: string;
  readonly size: number;
  readonly mtime_ms: number;
  /** The file upload the scan's bytes went to (tus), before the brain was created. */
  readonly upload?: string;
  readonly brain_id?: number;
  readonly readable_id?: string;
  readonly at: string;
}

/**
 * The scans this user has imported to this server, kept in the config directory (a dataset may be
 * read-only, and the state is the user's, not the data's): one JSON line appended per step, so a
 * run killed at any moment loses at most the line it was writing (ignored when read back).
 */
export class ImportState {
  private readonly byKey = new Map<string, ScanRecord>();
  private readonly byFile = new Map<string, ScanRecord>();
  private writes: Promise<void> = Promise.resolve();
  /** The state file, opened for appending (O_APPEND) on the first record and kept until close(). */
  private handle: FileHandle | undefined;

  private constructor(readonly file: string) {}

  /** The state of `userId` on `server` under `configDir`. */
  static async open(configDir: string, server: string, userId: number): Promise<ImportState> {
    const name = createHash('sha256').update(`${server}\n${userId}`).digest('hex').slice(0, 24);
    const state = new ImportState(path.join(configDir, 'imports', `${name}.jsonl`));
    let text = '';
    try {
      text = await readFile(state.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        state.remember(JSON.parse(line) as ScanRecord);
      } catch {
        // a line torn by a kill: the step it recorded runs again (idempotently)
      }
    }
    return state;
  }

  /** A done scan recognised without reading it again: same dataset, path, size and modification time. */
  doneByFile(identity: string, relativePath: string, size: number, mtimeMs: number): ScanRecord | undefined {
    const found = this.byFile.get(fileKey(identity, relativePath, size, mtimeMs));
    return found?.brain_id !== undefined ? found : undefined;
  }

  get(key: string): ScanRecord | undefined {
    return this.byKey.get(key);
  }

  /**
   * Appends a record (writes are serialised; each is one line, one write with O_APPEND): on disk
   * (the page cache, not fsynced) when this resolves.
   */
  record(entry: ScanRecord): Promise<void> {
    this.remember(entry);
    this.writes = this.writes.then(async () => {
      if (!this.handle) {
        await mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
        this.handle = await open(this.file, 'a', 0o600);
      }
      const handle = this.handle;
      const line = Buffer.from(`${JSON.stringify(entry)}\n`);
      // A regular file takes the whole line in one write; a short one (a full disk) is finished.
      let at = 0;
      while (at < line.length) at += (await handle.write(line, at)).bytesWritten;
    });
    return this.writes;
  }

  async close(): Promise<void> {
    try {
      await this.writes;
    } finally {
      const handle = this.handle;
      this.handle = undefined;
      await handle?.close();
    }
    await chmod(this.file, 0o600).catch(() => undefined);
  }

  private remember(entry: ScanRecord): void {
    if (typeof entry.key !== 'string') return;
    const before = this.byKey.get(entry.key);
    const merged =
      before?.brain_id !== undefined && entry.brain_id === undefined ? before : { ...before, ...entry };
    this.byKey.set(entry.key, merged);
    this.byFile.set(fileKey(merged.identity, merged.path, merged.size, merged.mtime_ms), merged);
    if (merged !== entry)
      this.byFile.set(fileKey(entry.identity, entry.path, entry.size, entry.mtime_ms), merged);
  }
}

const fileKey = (identity: string, relativePath: string, size: number, mtimeMs: number): string =>
  `${identity}\0${relativePath}\0${size}\0${Math.trunc(mtimeMs)}`;

/** The SHA-256 of a file's bytes (hex), read in chunks. */
export async function fileSha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 }))
    hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * A scan's key: its bytes (SHA-256), its path below the import's root and the dataset it belongs
 * to. The same scan imported again has the same key; the create's Idempotency-Key derives from it.
 */
export const scanKey = (identity: string, relativePath: string, sha256: string): string =>
  createHash('sha256').update(`bic-import-1\0${identity}\0${relativePath}\0${sha256}`).digest('hex');
