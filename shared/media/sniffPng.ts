import { crc32 } from './crc32';
import { dimensions, type Dimensions } from './dimensions';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const MAX_DIMENSION = 2 ** 31 - 1;
/** Allowed bit depths per colour type (PNG spec, table 11.1). */
const BIT_DEPTHS: Readonly<Record<number, readonly number[]>> = {
  0: [1, 2, 4, 8, 16],
  2: [8, 16],
  3: [1, 2, 4, 8],
  4: [8, 16],
  6: [8, 16],
};

/** The IHDR chunk must come first, be 13 bytes long, and carry a matching CRC. */
export function sniffPng(head: Buffer): Dimensions | undefined {
  if (head.length < 33 || !head.subarray(0, 8).equals(SIGNATURE)) return undefined;
  if (head.readUInt32BE(8) !== 13 || head.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  if (crc32(head.subarray(12, 29)) !== head.readUInt32BE(29)) return undefined;
  const width = head.readUInt32BE(16);
  const height = head.readUInt32BE(20);
  const [bitDepth = 0, colourType = -1, compression, filter, interlace = -1] = head.subarray(24, 29);
  const headerValid =
    (BIT_DEPTHS[colourType] ?? []).includes(bitDepth) && compression === 0 && filter === 0 && interlace <= 1;
  if (!headerValid || width > MAX_DIMENSION || height > MAX_DIMENSION) return undefined;
  return dimensions(width, height);
}
