/**
 * Copies received chunks (64 KiB from a socket) into whole batches of the hashing thread's memory
 * and hands each one on when it is full: the loop the blob write, the tus write and the hashing of
 * a stored blob share. Only the last batch (`flush`) may be short, or the first one when
 * `limitNextBatch` asked for fewer bytes (a write that must reach an O_DIRECT alignment first).
 *
 * A batch is taken (`take`) only when bytes come for it: a batch taken and never handed on stays
 * its taker's.
 */
export class BatchFiller {
  private batch: Buffer | undefined;
  private filled = 0;
  /** Bytes the batch being filled takes before it is handed on. */
  private room = Number.POSITIVE_INFINITY;

  constructor(
    /** A batch to fill (not zeroed); its length is a whole batch. */
    private readonly take: () => Buffer | Promise<Buffer>,
    /** Takes a filled batch (or its first bytes) and owns it from then on. */
    private readonly handOn: (batch: Buffer) => Promise<void> | void,
  ) {}

  /** Bytes copied into the batch being filled and not handed on yet. */
  get pending(): number {
    return this.filled;
  }

  /** The next batch is handed on after `bytes` bytes (at most a batch); call before it has any. */
  limitNextBatch(bytes: number): void {
    if (this.filled > 0) throw new Error('limitNextBatch: the batch being filled has bytes already');
    if (!(bytes > 0)) throw new Error(`limitNextBatch: ${bytes} bytes`);
    this.room = bytes;
  }

  /** Copies `chunk` in; resolves once every batch it filled is handed on. */
  async push(chunk: Buffer): Promise<void> {
    for (let at = 0; at < chunk.length;) {
      if (!this.batch) {
        const batch = await this.take();
        this.batch = batch;
        this.room = Math.min(this.room, batch.length);
      }
      const copied = Math.min(chunk.length - at, this.room - this.filled);
      // Buffer.fill copies with memcpy. Buffer.copy and TypedArray.set copy into shared memory one
      // relaxed atomic word at a time: perf showed that at 29 % of the server's CPU in an upload,
      // and the upload's event loop needing 0.4 s more per GiB.
      this.batch.fill(
        copied === chunk.length ? chunk : chunk.subarray(at, at + copied),
        this.filled,
        this.filled + copied,
      );
      at += copied;
      this.filled += copied;
      if (this.filled === this.room) await this.handOnBatch();
    }
  }

  /**
   * Copies `chunk` in at once when it fits the batch being filled without filling it (undefined: no
   * promise made, as for all but one 64 KiB chunk in a 4 MiB batch); otherwise what push returns.
   */
  pushSync(chunk: Buffer): Promise<void> | undefined {
    if (chunk.length === 0) return undefined;
    if (this.batch === undefined || this.filled + chunk.length >= this.room) return this.push(chunk);
    this.batch.fill(chunk, this.filled, this.filled + chunk.length);
    this.filled += chunk.length;
    return undefined;
  }

  /** Hands on the batch being filled, short, when it has bytes. */
  async flush(): Promise<void> {
    if (this.filled > 0) await this.handOnBatch();
  }

  private async handOnBatch(): Promise<void> {
    const batch = this.batch!;
    const bytes = this.filled;
    this.batch = undefined;
    this.filled = 0;
    this.room = Number.POSITIVE_INFINITY;
    await this.handOn(bytes === batch.length ? batch : batch.subarray(0, bytes));
  }
}
