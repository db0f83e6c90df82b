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
