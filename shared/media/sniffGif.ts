import { dimensions, type Dimensions } from './dimensions';

/** Signature plus the logical screen descriptor, whose size is the image's. */
export function sniffGif(head: Buffer): Dimensions | undefined {
  if (head.length < 13) return undefined;
  const signature = head.toString('latin1', 0, 6);
  if (signature !== 'GIF87a' && signature !== 'GIF89a') return undefined;
  return dimensions(head.readUInt16LE(6), head.readUInt16LE(8));
}
