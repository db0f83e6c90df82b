import type { Readable } from 'node:stream';

/**
 * The BlobStore port. Adapters: local disk (shared/blobStore/localDisk) and S3/MinIO
 * (shared/blobStore/s3). Both pass tests/contract/blobStore.contract.ts.
 * Keys are relative, '/'-separated, made of [A-Za-z0-9._-] segments (e.g. "avatars/7/<uuid>.png").
 */
export interface PutResult {
  readonly key: string;
  readonly size: number;
  /** Lowercase hex SHA-256 of the bytes written. */
  readonly sha256: string;
}

export interface PutOptions {
  readonly contentType?: string;
  /** The write fails with BlobTooLargeError once more than this many bytes arrive; nothing stays stored. */
  readonly maxBytes?: number;
}

export interface BlobInfo {
  readonly key: string;
  readonly size: number;
  readonly contentType: string;
}

/** A blob as a listing sees it. */
export interface ListedBlob {
  readonly key: string;
  readonly size: number;
  /**
   * When the blob was last stored, as the store's clock saw it (local disk: the later of the file's
   * modification and change times, which a put's final rename sets; S3: LastModified, which for a
   * multipart upload is when the upload began).
   */
  readonly storedAt: Date;
}

/**
 * Bytes a write left without making a blob of them: a temp file or an incomplete multipart upload
 * of a put that never finished (a crash), or a sidecar whose blob is gone.
 */
export interface Leftover {
  /** Names it to removeLeftover and in logs; its form is the adapter's. */
  readonly id: string;
  readonly size: number;
  /** When it was last written to: a write still in progress keeps this recent. */
  readonly touchedAt: Date;
}

export interface BlobStore {
  /**
   * Streams `body` into the store, hashing and counting on the way. Durable when it resolves.
   * If the body errors, is aborted or exceeds maxBytes, it rejects and leaves no bytes behind.
   */
  put(key: string, body: Readable, options?: PutOptions): Promise<PutResult>;
  /** Undefined when absent. */
  stat(key: string): Promise<BlobInfo | undefined>;
  /** Stream of the bytes; rejects with BlobNotFoundError when absent. Optional inclusive byte range. */
  get(key: string, range?: { start: number; end?: number }): Promise<Readable>;
  /** Deleting an absent key is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Every blob whose key starts with `prefix` (default: all), in no particular order. Partial
   * writes (see listLeftovers) are never listed.
   */
  list(prefix?: string): AsyncIterable<ListedBlob>;
  /**
   * Partial writes left behind, in no particular order; never one that a put of
   * this process is still writing. A put of another process still writing is told apart only by a
   * recent touchedAt. A store that cannot list them (an S3 server without ListMultipartUploads)
   * lists none.
   */
  listLeftovers(): AsyncIterable<Leftover>;
  /**
   * Removes a leftover listLeftovers gave, unless it was touched after `leftover.touchedAt` (a
   * write that went on) or is gone. Resolves with whether it removed it.
   */
  removeLeftover(leftover: Leftover): Promise<boolean>;
  /** Checks the store answers (for /health/). */
  ping(): Promise<void>;
  /**
   * Present only when the store is configured to serve downloads itself (S3 with presigned
   * downloads): a time-limited URL that serves the blob as an attachment named `filename`.
   * Creating it contacts no server.
   */
  presignedDownloadUrl?(key: string, download: PresignedDownload): Promise<string>;
}

export interface PresignedDownload {
  /** The Content-Disposition header value the store answers with. */
  readonly contentDisposition: string;
  /** The Content-Type the store answers with. */
  readonly contentType: string;
}

export class BlobTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`more than ${maxBytes} bytes`);
    this.name = 'BlobTooLargeError';
  }
}

export class BlobNotFoundError extends Error {
  constructor(readonly key: string) {
    super(`no blob ${key}`);
    this.name = 'BlobNotFoundError';
  }
}
