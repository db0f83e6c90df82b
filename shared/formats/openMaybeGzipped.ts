import { pipeline, Transform, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { FormatFailure } from './formatFailure';
import type { ReadContext } from './readContext';

/**
 * Deflate cannot exceed about 1032:1; past 64 MiB out, a stream inflating faster than 500:1 is
 * treated as a bomb (only near-constant data gets there; scans, even sparse masks, compress less).
 */
export const maxGzipRatio = 500;
const ratioCheckedAfter = 64 * 2 ** 20;

export function isGzip(head: Buffer): boolean {
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
}

/**
 * The whole file as a stream, gunzipped on the way when `gzip`, bounded in ratio and by what the
 * inspection may decompress in all (its budget counts every inflated byte). Destroying the returned
 * stream closes the source; a source error comes out of it unchanged (still recognisable as a fault).
 */
export async function openMaybeGzipped(context: ReadContext, gzip: boolean): Promise<Readable> {
  const raw = await context.open();
  if (!gzip) return raw;
  // What gunzip has been handed, not what the source has read ahead: a small file is read whole at
  // once, and its ratio must be judged on the part inflated so far.
  const gunzip = createGunzip();
  let inflated = 0;
  const guard = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      inflated += chunk.length;
      try {
        context.budget.countDecompressed(chunk.length);
      } catch (error) {
        return done(error as Error);
      }
      const compressed = gunzip.bytesWritten;
      if (inflated > ratioCheckedAfter && inflated / Math.max(1, compressed) > maxGzipRatio) {
        done(new FormatFailure(`gzip bomb: ${compressed} bytes inflate to more than ${inflated}`));
      } else done(null, chunk);
    },
  });
  pipeline(raw, gunzip, guard, () => undefined);
  return guard;
}
