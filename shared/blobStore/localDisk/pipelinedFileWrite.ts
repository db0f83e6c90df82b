import type { FileHandle } from 'node:fs/promises';
import type { OffThreadSha256 } from '../offThreadSha256';
import { writeAllAt } from './durableFs';

/** Bytes whose write is in flight or that wait for the hashing thread before `append` waits. */
const MAX_PENDING_BYTES = 8 * 1024 * 1024;
/** Written bytes after which a flush to disk starts in the background (one at a time). */
const FLUSH_EVERY_BYTES = 64 * 1024 * 1024;

/** What of a FileHandle the write uses. */
export type WritableFile = Pick<FileHandle, 'write' | 'datasync' | 'sync'>;

interface Batch {
  readonly bytes: number;
  /** Settles once the batch is written and handed to the hash, in order; rejects on a failure. */
  readonly done: Promise<void>;
}

/**
 * Writes batches at increasing offsets with several writes in flight, so receiving the next
 * batch never waits for the disk, then hands each one to the hash in order once it is written.
 * Written data is flushed in the background as it accumulates: the final fsync then has little
 * left to do, and one upload never holds a gigabyte of dirty pages.
 */
export class PipelinedFileWrite {
  private position = 0;
  private readonly batches: Batch[] = [];
  private pendingBytes = 0;
  private unflushedBytes = 0;
  private flushing: Promise<void> | undefined;
  private flushFailure: Error | undefined;
  /** The last batch's hand-off: each batch is hashed after the one before it. */
  private tail: Promise<void> = Promise.resolve();
  private readonly writes = new Set<Promise<void>>();

  constructor(
    private readonly handle: WritableFile,
    private readonly hash: OffThreadSha256,
  ) {}

  get size(): number {
    return this.position;
  }

  /** Starts writing `batch` (handed over: not to be touched again); waits while too much is pending. */
  async append(batch: Buffer): Promise<void> {
    const written = this.track(writeAllAt(this.handle, batch, this.position));
    this.position += batch.length;
    const done = this.tail.then(async () => {
      await written;
      this.flushInBackground(batch.length);
      await this.hash.update(batch);
    });
    // Awaited by settleOldest, unless a failure ends the upload first: never an unhandled rejection.
    done.catch(() => undefined);
    this.tail = done;
    this.batches.push({ bytes: batch.length, done });
    this.pendingBytes += batch.length;
    while (this.pendingBytes > MAX_PENDING_BYTES) await this.settleOldest();
  }

  /** Resolves once every byte is written, handed to the hash and durable on disk. */
  async finish(): Promise<void> {
    while (this.batches.length > 0) await this.settleOldest();
    await this.flushing?.catch(() => undefined);
    if (this.flushFailure !== undefined) throw this.flushFailure;
    await this.handle.sync();
  }

  /** After a failure: resolves once no write or flush is in flight, so the file may be closed. */
  async quiesce(): Promise<void> {
    await Promise.allSettled([...this.writes]);
  }

  private async settleOldest(): Promise<void> {
    const oldest = this.batches.shift();
    if (!oldest) return;
    this.pendingBytes -= oldest.bytes;
    await oldest.done;
  }

  private flushInBackground(written: number): void {
    this.unflushedBytes += written;
    if (this.flushing || this.unflushedBytes < FLUSH_EVERY_BYTES) return;
    this.unflushedBytes = 0;
    const flush = this.track(this.handle.datasync());
    this.flushing = flush;
    flush.then(
      () => (this.flushing = undefined),
      (error: unknown) => {
        // Kept for finish(): after a failed flush a later fsync may report success (the kernel
        // can drop the error with the dirty pages), so the blob must fail here and now.
        this.flushFailure ??= error instanceof Error ? error : new Error(String(error));
        this.flushing = undefined;
      },
    );
  }

  /** Keeps `operation` until it settles, and marks its rejection as handled (it surfaces elsewhere). */
  private track(operation: Promise<void>): Promise<void> {
    this.writes.add(operation);
    operation.then(
      () => this.writes.delete(operation),
      () => this.writes.delete(operation),
    );
    return operation;
  }
}
