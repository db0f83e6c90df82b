import { createHash } from 'node:crypto';

/** Stands in for every multipart delimiter in what is hashed. */
const MASK = Buffer.from('--\u0000boundary\u0000');

/** The "--<boundary>" delimiter of a multipart Content-Type, if it is one. */
export function multipartDelimiter(contentType: string | undefined): Buffer | undefined {
  if (!contentType || !/^multipart\//i.test(contentType.trim())) return undefined;
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  const boundary = match?.[1] ?? match?.[2];
  return boundary ? Buffer.from(`--${boundary}`, 'latin1') : undefined;
}

/**
 * SHA-256 of a body as it streams by, with each multipart delimiter replaced by a fixed mask:
 * clients pick a fresh random boundary for every request, so an honest retry of the same form
 * would otherwise never hash the same. Chunk borders do not matter: a delimiter split across two
 * chunks is found because the last delimiter-length-minus-one bytes wait for the next chunk.
 */
export class BoundaryMaskingHash {
  private readonly hash = createHash('sha256');
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly delimiter: Buffer | undefined) {}

  update(chunk: Buffer): void {
    if (!this.delimiter) {
      this.hash.update(chunk);
      return;
    }
    let data = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    for (let at = data.indexOf(this.delimiter); at !== -1; at = data.indexOf(this.delimiter)) {
      this.hash.update(data.subarray(0, at));
      this.hash.update(MASK);
      data = data.subarray(at + this.delimiter.length);
    }
    const keep = Math.min(data.length, this.delimiter.length - 1);
    this.hash.update(data.subarray(0, data.length - keep));
    this.pending = Buffer.from(data.subarray(data.length - keep));
  }

  digest(): Buffer {
    this.hash.update(this.pending);
    return this.hash.digest();
  }
}
