import type { ReadContext } from './readContext';

/** The size of one cached block, and the largest read served from the cache. */
export const BLOCK_SIZE = 64 * 1024;

/**
 * An LRU of 64 KiB blocks of a ReadContext's source: a format's many small reads (TIFF directories
 * and tags, a zip's central directory) cost a few range requests instead of one each.
 */
export class CachedBlocks {
  private readonly blocks = new Map<number, Promise<Buffer>>();

  constructor(
    private readonly context: ReadContext,
    private readonly maxBlocks: number,
  ) {}

  /** Bytes [start, end) clipped to the source's size. */
  async read(start: number, end: number): Promise<Buffer> {
    const first = Math.floor(start / BLOCK_SIZE);
    const last = Math.floor((end - 1) / BLOCK_SIZE);
    const parts: Buffer[] = [];
    for (let index = first; index <= last; index++) parts.push(await this.block(index));
    const joined = parts.length === 1 ? (parts[0] ?? Buffer.alloc(0)) : Buffer.concat(parts);
    return joined.subarray(start - first * BLOCK_SIZE, end - first * BLOCK_SIZE);
  }

  clear(): void {
    this.blocks.clear();
  }

  private block(index: number): Promise<Buffer> {
    const cached = this.blocks.get(index);
    if (cached) {
      this.blocks.delete(index); // re-insert: most recently used last
      this.blocks.set(index, cached);
      return cached;
    }
    const loading = this.context.read(index * BLOCK_SIZE, BLOCK_SIZE);
    loading.catch(() => this.blocks.delete(index));
    this.blocks.set(index, loading);
    const oldest = this.blocks.keys().next().value;
    if (this.blocks.size > this.maxBlocks && oldest !== undefined) this.blocks.delete(oldest);
    return loading;
  }
}
