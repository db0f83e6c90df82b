import { Transform, type TransformCallback } from 'node:stream';

/**
 * Passes a file through unchanged and keeps a copy of its first bytes, so a handler can check the
 * content (magic numbers, image header) after the file went straight into the BlobStore.
 */
export class HeadTap extends Transform {
  private readonly chunks: Buffer[] = [];
  private captured = 0;

  constructor(private readonly limit: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.captured < this.limit) {
      // A copy, so the head never pins the parser's larger buffers in memory.
      const part = Buffer.from(chunk.subarray(0, this.limit - this.captured));
      this.chunks.push(part);
      this.captured += part.length;
    }
    callback(null, chunk);
  }

  head(): Buffer {
    return Buffer.concat(this.chunks, this.captured);
  }
}
