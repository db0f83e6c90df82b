import { fail } from '#shared/formats/formatFailure';
import { BLOCK_SIZE, CachedBlocks } from '#shared/formats/cachedBlocks';
import type { ReadContext } from '#shared/formats/readContext';

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
  private readonly blocks: CachedBlocks;

  constructor(private readonly context: ReadContext) {
    this.blocks = new CachedBlocks(context, maxCachedBlocks);
  }

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
    if (end - offset > BLOCK_SIZE) {
      this.context.budget.allowDecoded(end - offset, `a TIFF strip, tile or tag of ${end - offset} bytes`);
    }
    const bytes =
      end - offset > BLOCK_SIZE
        ? await this.context.read(offset, end - offset)
        : await this.blocks.read(offset, end);
    return toArrayBuffer(bytes);
  }
}

function toArrayBuffer(bytes: Buffer): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer;
}
