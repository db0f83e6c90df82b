import { pipeline, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { ReadContext } from './readContext';

export function isGzip(head: Buffer): boolean {
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
}

/**
 * The whole file as a stream, gunzipped on the way when `gzip`. Destroying the returned stream
 * closes the source; a source error comes out of it unchanged (still recognisable as a fault).
 */
export async function openMaybeGzipped(context: ReadContext, gzip: boolean): Promise<Readable> {
  const raw = await context.open();
  if (!gzip) return raw;
  const gunzip = createGunzip();
  pipeline(raw, gunzip, () => undefined);
  return gunzip;
}
