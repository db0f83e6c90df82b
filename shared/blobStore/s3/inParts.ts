/** One part of a streamed body; `last` is true only for the remainder after the body ended. */
export interface Part {
  readonly data: Buffer;
  readonly last: boolean;
}

/**
 * Regroups a byte stream into parts of at least partSize bytes (S3 wants >= 5 MiB for all parts but
 * the last), so memory holds one part at a time whatever the body's size. The final remainder is
 * always yielded, possibly empty, so a consumer knows when the body ended.
 */
export async function* inParts(
  source: AsyncIterable<Buffer> | Iterable<Buffer>,
  partSize: number,
): AsyncGenerator<Part> {
  let chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of source) {
    chunks.push(chunk);
    length += chunk.length;
    if (length >= partSize) {
      yield { data: Buffer.concat(chunks, length), last: false };
      chunks = [];
      length = 0;
    }
  }
  yield { data: Buffer.concat(chunks, length), last: true };
}
