import { dimensions, type Dimensions } from './dimensions';

const VP8_START_CODE = Buffer.from([0x9d, 0x01, 0x2a]);
const VP8L_SIGNATURE = 0x2f;

/** RIFF container with the WEBP form type; the first chunk says which bitstream holds the size. */
export function sniffWebp(head: Buffer): Dimensions | undefined {
  if (
    head.length < 25 ||
    head.toString('latin1', 0, 4) !== 'RIFF' ||
    head.toString('latin1', 8, 12) !== 'WEBP'
  )
    return undefined;
  const chunkSize = head.readUInt32LE(16);
  if (head.readUInt32LE(4) < 12 + chunkSize) return undefined;
  switch (head.toString('latin1', 12, 16)) {
    case 'VP8 ':
      return chunkSize >= 10 ? lossy(head) : undefined;
    case 'VP8L':
      return chunkSize >= 5 ? lossless(head) : undefined;
    case 'VP8X':
      return chunkSize >= 10 && head.length >= 30
        ? dimensions(head.readUIntLE(24, 3) + 1, head.readUIntLE(27, 3) + 1)
        : undefined;
    default:
      return undefined;
  }
}

/** VP8 key frame: 3-byte frame tag (bit 0 clear), start code, then 14-bit width and height. */
function lossy(head: Buffer): Dimensions | undefined {
  if (head.length < 30 || (head[20] ?? 1) & 1 || !head.subarray(23, 26).equals(VP8_START_CODE))
    return undefined;
  return dimensions(head.readUInt16LE(26) & 0x3fff, head.readUInt16LE(28) & 0x3fff);
}

/** VP8L: signature byte, then width-1 and height-1 in 14 bits each, alpha hint, 3-bit version 0. */
function lossless(head: Buffer): Dimensions | undefined {
  if (head[20] !== VP8L_SIGNATURE) return undefined;
  const bits = head.readUInt32LE(21);
  if (bits >>> 29 !== 0) return undefined;
  return dimensions((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
}
