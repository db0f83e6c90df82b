import { Readable } from 'node:stream';
import type { ByteSource } from './byteSource';
import { InspectionBudget } from './inspectionBudget';
import type { InspectionLimits } from './inspectionLimits';

/**
 * One inspection's access to its source. Errors raised by the source (its open() or its streams) are
 * remembered, so the caller can tell an I/O fault (retry) from bad content (fail); every stream it
 * opens is destroyed when the signal aborts. Every range it requests counts against the budget.
 */
export class ReadContext {
  private readonly faults = new WeakSet<object>();
  readonly budget: InspectionBudget;

  constructor(
    readonly source: ByteSource,
    readonly limits: InspectionLimits,
    readonly signal: AbortSignal | undefined,
  ) {
    this.budget = new InspectionBudget(limits, source.size);
  }

  get size(): number {
    return this.source.size;
  }

  isSourceFault(error: unknown): boolean {
    return typeof error === 'object' && error !== null && this.faults.has(error);
  }

  async open(start = 0, end = this.size - 1): Promise<Readable> {
    this.signal?.throwIfAborted();
    this.budget.countRead(Math.max(0, end - start + 1));
    let raw: NodeJS.ReadableStream | Readable;
    try {
      raw = await this.source.open({ start, end });
    } catch (error) {
      this.markFault(error);
      throw error;
    }
    const stream = raw instanceof Readable ? raw : new Readable().wrap(raw);
    stream.on('error', (error) => this.markFault(error));
    this.destroyOnAbort(stream);
    return stream;
  }

  /** Exactly the bytes [offset, offset+length) clipped to the source's size. */
  async read(offset: number, length: number): Promise<Buffer> {
    const end = Math.min(offset + length, this.size) - 1;
    if (end < offset) return Buffer.alloc(0);
    const stream = await this.open(offset, end);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  private markFault(error: unknown): void {
    if (typeof error === 'object' && error !== null) this.faults.add(error);
  }

  private destroyOnAbort(stream: Readable): void {
    const signal = this.signal;
    if (!signal) return;
    const onAbort = (): void => {
      stream.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    stream.once('close', () => signal.removeEventListener('abort', onAbort));
  }
}
