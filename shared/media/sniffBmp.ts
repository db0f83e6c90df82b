import { dimensions, type Dimensions } from './dimensions';

/** BITMAPINFOHEADER and its successors (V2-V5, OS/2 2.x) share the signed 32-bit size layout. */
const INFO_HEADER_SIZES = [16, 40, 52, 56, 64, 108, 124];
const CORE_HEADER_SIZE = 12;
const BITS_PER_PIXEL = [1, 2, 4, 8, 16, 24, 32];

/** "BM", then the DIB header; a negative height only means the rows are stored top-down. */
export function sniffBmp(head: Buffer): Dimensions | undefined {
  if (head.length < 26 || head[0] !== 0x42 || head[1] !== 0x4d) return undefined;
  const headerSize = head.readUInt32LE(14);
  if (head.readUInt32LE(10) < 14 + headerSize) return undefined; // pixels cannot start inside the headers
  if (headerSize === CORE_HEADER_SIZE) {
    return validated(
      head.readUInt16LE(18),
      head.readUInt16LE(20),
      head.readUInt16LE(22),
      head.readUInt16LE(24),
    );
  }
  if (!INFO_HEADER_SIZES.includes(headerSize) || head.length < 30) return undefined;
  return validated(
    head.readInt32LE(18),
    Math.abs(head.readInt32LE(22)),
    head.readUInt16LE(26),
    head.readUInt16LE(28),
  );
}

function validated(
  width: number,
  height: number,
  planes: number,
  bitsPerPixel: number,
): Dimensions | undefined {
  if (planes !== 1 || !BITS_PER_PIXEL.includes(bitsPerPixel)) return undefined;
  return dimensions(width, height);
}
