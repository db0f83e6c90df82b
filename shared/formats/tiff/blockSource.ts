import { fail } from '#shared/formats/formatFailure';
import type { ReadContext } from '#shared/formats/readContext';

const blockSize = 64 * 1024;
const maxCachedBlocks = 256;

interface Slice {
  offset: number;
  length: number;
}

/**
 * geotiff's source interface over a ReadContext: small reads (headers, IFDs, tag arrays) go through
 * an LRU of 64 KiB blocks so a TIFF's many small reads cost few range requests; large reads (strips,
 * tiles) go straight to the source. A read starting past the end means the file is truncated.
 */
export class BlockSource {
  private readonly blocks = new Map<number, Promise<Buffer>>();

  constructor(private readonly context: ReadContext) {}

  get fileSize(): number {
    return this.context.size;
  }

  async fetch(slices: Slice[], signal?: AbortSignal): Promise<ArrayBuffer[]> {
    signal?.throwIfAborted();
    return Promise.all(slices.map((slice) => this.fetchSlice(slice)));
  }

  async close(): Promise<void> {
    this.blocks.clear();
    return Promise.resolve();
  }

  private async fetchSlice({ offset, length }: Slice): Promise<ArrayBuffer> {
    if (offset >= this.fileSize) {
      fail(`truncated TIFF file: it refers to byte ${offset}, the file has ${this.fileSize}`);
    }
    const end = Math.min(offset + length, this.fileSize);
    if (end - offset > blockSize) {
      this.context.budget.allowDecoded(end - offset, `a TIFF strip, tile or tag of ${end - offset} bytes`);
    }
    const bytes =
      end - offset > blockSize
        ? await this.context.read(offset, end - offset)
        : await this.fromBlocks(offset, end);
    return toArrayBuffer(bytes);
  }

  private async fromBlocks(start: number, end: number): Promise<Buffer> {
    const first = Math.floor(start / blockSize);
    const last = Math.floor((end - 1) / blockSize);
    const parts: Buffer[] = [];
    for (let index = first; index <= last; index++) parts.push(await this.block(index));
    const joined = parts.length === 1 ? (parts[0] ?? Buffer.alloc(0)) : Buffer.concat(parts);
    return joined.subarray(start - first * blockSize, end - first * blockSize);
  }

  private block(index: number): Promise<Buffer> {
    const cached = this.blocks.get(index);
    if (cached) {
      this.blocks.delete(index); // re-insert: most recently used last
      this.blocks.set(index, cached);
      return cached;
    }
    const loading = this.context.read(index * blockSize, blockSize);
    loading.catch(() => this.blocks.delete(index));
    this.blocks.set(index, loading);
    const oldest = this.blocks.keys().next().value;
    if (this.blocks.size > maxCachedBlocks && oldest !== undefined) this.blocks.delete(oldest);
    return loading;
  }
}

function toArrayBuffer(bytes: Buffer): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer;
}
