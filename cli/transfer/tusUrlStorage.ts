import { createHash } from 'node:crypto';
import { chmod, mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { PreviousUpload, UrlStorage } from 'tus-js-client';

/** One unfinished upload as kept on disk: where it is on the server, and until when it is worth trying. */
interface StoredUpload {
  readonly fingerprint: string;
  readonly upload: Omit<PreviousUpload, 'urlStorageKey'>;
  /** The server's Upload-Expires (tus expiration extension), when it said. */
  readonly expiresAt?: string;
}

/** Without an Upload-Expires from the server, an entry is forgotten after this long. */
export const DEFAULT_ENTRY_LIFE_MS = 7 * 24 * 3600 * 1000;

/**
 * tus-js-client's URL storage as one JSON file per fingerprint in `<config dir>/uploads/`, so the
 * next `bic upload` of the same file, in another process, finds the upload URL to resume (HEAD,
 * then PATCH from the server's offset). Files are 0600 in a 0700 directory: an upload URL is only
 * usable with the user's token, but says what they upload. Written atomically (temp + rename).
 */
export class TusUrlStorage implements UrlStorage {
  constructor(
    readonly dir: string,
    private readonly now: () => number = Date.now,
  ) {}

  static keyOf(fingerprint: string): string {
    return createHash('sha256').update(fingerprint).digest('hex');
  }

  private file(key: string): string {
    return path.join(this.dir, `${key}.json`);
  }

  async findAllUploads(): Promise<PreviousUpload[]> {
    const keys = await this.keys();
    const found = await Promise.all(keys.map((key) => this.read(key)));
    return found.flatMap((entry, i) => (entry ? [{ ...entry.upload, urlStorageKey: keys[i] ?? '' }] : []));
  }

  async findUploadsByFingerprint(fingerprint: string): Promise<PreviousUpload[]> {
    const key = TusUrlStorage.keyOf(fingerprint);
    const entry = await this.read(key);
    return entry && entry.fingerprint === fingerprint ? [{ ...entry.upload, urlStorageKey: key }] : [];
  }

  async removeUpload(urlStorageKey: string): Promise<void> {
    if (!/^[0-9a-f]{64}$/.test(urlStorageKey)) return;
    await rm(this.file(urlStorageKey), { force: true });
  }

  async addUpload(fingerprint: string, upload: PreviousUpload): Promise<string> {
    const key = TusUrlStorage.keyOf(fingerprint);
    const { urlStorageKey: _ignored, ...rest } = upload;
    await this.write(key, { fingerprint, upload: rest });
    return key;
  }

  /** Records the server's Upload-Expires on the entry of `fingerprint` (when it has one). */
  async setExpiry(fingerprint: string, expires: string): Promise<void> {
    const key = TusUrlStorage.keyOf(fingerprint);
    const entry = await this.read(key);
    const at = Date.parse(expires);
    if (!entry || Number.isNaN(at) || entry.expiresAt === new Date(at).toISOString()) return;
    await this.write(key, { ...entry, expiresAt: new Date(at).toISOString() });
  }

  /** Deletes entries past their expiry (or too old without one) and unreadable ones; returns how many. */
  async prune(): Promise<number> {
    let removed = 0;
    for (const key of await this.keys()) {
      if (await this.read(key)) continue;
      await rm(this.file(key), { force: true });
      removed++;
    }
    return removed;
  }

  private async keys(): Promise<string[]> {
    try {
      return (await readdir(this.dir))
        .filter((name) => /^[0-9a-f]{64}\.json$/.test(name))
        .map((name) => name.slice(0, -5));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }

  /** The entry, or undefined when absent, unreadable or expired (those are left for prune). */
  private async read(key: string): Promise<StoredUpload | undefined> {
    let entry: StoredUpload;
    try {
      entry = JSON.parse(await readFile(this.file(key), 'utf8')) as StoredUpload;
    } catch {
      return undefined;
    }
    if (typeof entry?.fingerprint !== 'string' || typeof entry.upload?.uploadUrl !== 'string')
      return undefined;
    const expiry = entry.expiresAt
      ? Date.parse(entry.expiresAt)
      : Date.parse(entry.upload.creationTime) + DEFAULT_ENTRY_LIFE_MS;
    if (Number.isNaN(expiry) || expiry <= this.now()) return undefined;
    return entry;
  }

  private async write(key: string, entry: StoredUpload): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await chmod(this.dir, 0o700);
    const temp = `${this.file(key)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    try {
      await writeFile(temp, `${JSON.stringify(entry, null, 2)}\n`, { mode: 0o600 });
      await rename(temp, this.file(key));
    } finally {
      await rm(temp, { force: true });
    }
  }
}
