import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';

/**
 * The unfinished state of a download: bytes in `<target>.part`, and beside them in
 * `<target>.part.json` the ETag they belong to, so a later run resumes only the same content
 * (If-Range). The target itself appears only once the whole file is there and verified.
 */
export class PartialDownload {
  readonly partFile: string;
  readonly stateFile: string;

  constructor(readonly target: string) {
    this.partFile = `${target}.part`;
    this.stateFile = `${target}.part.json`;
  }

  /** Bytes already on disk (0 when none). */
  async size(): Promise<number> {
    return stat(this.partFile).then(
      (s) => s.size,
      () => 0,
    );
  }

  /** The ETag recorded for the bytes on disk, if any. */
  async etag(): Promise<string | undefined> {
    try {
      const state = JSON.parse(await readFile(this.stateFile, 'utf8')) as { etag?: unknown };
      return typeof state.etag === 'string' ? state.etag : undefined;
    } catch {
      return undefined;
    }
  }

  async remember(etag: string | null): Promise<void> {
    if (etag === null) await rm(this.stateFile, { force: true });
    else await writeFile(this.stateFile, `${JSON.stringify({ etag })}\n`, { mode: 0o600 });
  }

  /** A SHA-256 already fed with the first `length` bytes on disk (to verify a resumed file whole). */
  async hashOfPrefix(length: number): Promise<Hash> {
    const hash = createHash('sha256');
    if (length === 0) return hash;
    for await (const chunk of createReadStream(this.partFile, { start: 0, end: length - 1 }))
      hash.update(chunk as Buffer);
    return hash;
  }

  async discard(): Promise<void> {
    await rm(this.partFile, { force: true });
    await rm(this.stateFile, { force: true });
  }
}
