import { Transform } from 'node:stream';
import { BatchFiller } from '#shared/blobStore/localDisk/batchFiller';
import { OffThreadSha256 } from '#shared/blobStore/offThreadSha256';

/** SHA-256 of an upload's bytes from offset 0, fed in order, hashed on the hashing thread. */
export class RunningHash {
  private readonly hash = new OffThreadSha256();
  /** What `update` is given, copied into batches of the hashing thread's memory. */
  private readonly batches = new BatchFiller(
    () => this.hash.batch(),
    (batch) => this.hash.update(batch),
  );
  /** How many bytes from offset 0 have been fed. */
  hashed = 0;

  async update(chunk: Buffer): Promise<void> {
    this.hashed += chunk.length;
    await this.batches.push(chunk);
  }

  /**
   * The hashing thread's session, for a file write there to hash the next bytes of the upload into
   * (the local disk's writeTusBody), telling `advance` how many. Not mixed with `update` within one
   * write: what `update` has given is handed over first.
   */
  async session(): Promise<OffThreadSha256> {
    await this.batches.flush();
    return this.hash;
  }

  advance(bytes: number): void {
    this.hashed += bytes;
  }

  async digest(): Promise<string> {
    await this.batches.flush();
    return this.hash.digest();
  }

  abort(): void {
    this.hash.abort();
  }
}

/**
 * The SHA-256 of uploads being written through this process, kept while their bytes arrive here in
 * order, so that finishing one does not read it all again. A cache, never the truth: it is used
 * only when it has seen exactly the bytes the store holds (an upload continued on another
 * instance, or whose write failed midway, is hashed again from storage). At most `capacity`
 * uploads are followed at once (each holds a batch of shared memory); the oldest is dropped.
 */
export class RunningUploadHashes {
  private readonly running = new Map<string, RunningHash>();

  constructor(private readonly capacity = 32) {}

  /** A pass-through stage hashing the bytes written at `offset`; undefined when it cannot follow. */
  tap(id: string, offset: number): Transform | undefined {
    const hash = this.follow(id, offset);
    if (!hash) return undefined;
    return new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk).then(
          () => done(null, chunk),
          (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
        );
      },
    });
  }

  /**
   * The running hash of upload `id` to feed the bytes written at `offset` with: the one that has
   * seen exactly `offset` bytes, a new one at 0; undefined when it cannot follow.
   */
  follow(id: string, offset: number): RunningHash | undefined {
    let running = this.running.get(id);
    if (running && running.hashed !== offset) {
      this.forget(id);
      running = undefined;
    }
    if (!running) {
      if (offset !== 0) return undefined;
      running = new RunningHash();
      this.running.set(id, running);
      for (const oldest of this.running.keys()) {
        if (this.running.size <= this.capacity) break;
        this.forget(oldest);
      }
    }
    return running;
  }

  /** The digest of an upload of `size` bytes when all of them were hashed here; forgets it either way. */
  async take(id: string, size: number): Promise<string | undefined> {
    const running = this.running.get(id);
    this.running.delete(id);
    if (!running) return undefined;
    if (running.hashed !== size) {
      running.abort();
      return undefined;
    }
    try {
      return await running.digest();
    } finally {
      running.abort();
    }
  }

  forget(id: string): void {
    this.running.get(id)?.abort();
    this.running.delete(id);
  }
}
