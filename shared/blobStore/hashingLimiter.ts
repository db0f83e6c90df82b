import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { BlobTooLargeError } from './blobStore';

/** A byte limit must be a number from 0 up (Infinity: none). */
export function assertMaxBytes(maxBytes: number): void {
  if (!(maxBytes >= 0)) throw new RangeError(`maxBytes must be a non-negative number, got ${maxBytes}`);
}

/**
 * Passes bytes through unchanged while counting them, and fails with BlobTooLargeError before
 * forwarding the first byte beyond maxBytes, so no adapter ever writes more than the limit.
 */
export class SizeLimiter extends Transform {
  private bytes = 0;

  constructor(private readonly maxBytes = Number.POSITIVE_INFINITY) {
    super();
    assertMaxBytes(maxBytes);
  }

  /** Bytes passed so far. */
  get size(): number {
    return this.bytes;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) {
      callback(new BlobTooLargeError(this.maxBytes));
      return;
    }
    this.passing(chunk);
    callback(null, chunk);
  }

  /** Sees each chunk within the limit as it passes. */
  protected passing(_chunk: Buffer): void {}
}

/** A SizeLimiter that also hashes what passes (SHA-256, on this thread). */
export class HashingLimiter extends SizeLimiter {
  private readonly hash = createHash('sha256');
  private digest: string | undefined;

  protected override passing(chunk: Buffer): void {
    this.hash.update(chunk);
  }

  override _flush(callback: TransformCallback): void {
    this.digest = this.hash.digest('hex');
    callback();
  }

  /** Size and lowercase hex SHA-256 of everything that passed; available once the stream has ended. */
  result(): { size: number; sha256: string } {
    if (this.digest === undefined) throw new Error('HashingLimiter.result() called before the stream ended');
    return { size: this.size, sha256: this.digest };
  }
}
