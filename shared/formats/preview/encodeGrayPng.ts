import { constants, crc32, deflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const FILTER_UP = 2;
const FILTER_PAETH = 4;

/**
 * An 8-bit grayscale PNG of `gray` (row-major, width × height). Each row is filtered by what a
 * preview is made of: a row equal to the one above (a montage scaled up repeats every row) is "up"
 * (all zeros), any other "Paeth" (runs of equal pixels, and smooth gradients, become zeros or
 * near it). One pass over the pixels,
 * where trying every filter on every row (pngjs) cost several times the rest of an inspection.
 */
export function encodeGrayPng(width: number, height: number, gray: Uint8Array): Buffer {
  const stride = width + 1;
  const filtered = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const row = gray.subarray(y * width, (y + 1) * width);
    const out = filtered.subarray(y * stride, (y + 1) * stride);
    if (y > 0 && Buffer.compare(row, gray.subarray((y - 1) * width, y * width)) === 0) {
      out[0] = FILTER_UP; // the rest stays zero
      continue;
    }
    out[0] = FILTER_PAETH;
    paeth(row, y > 0 ? gray.subarray((y - 1) * width, y * width) : undefined, out);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 0; // colour type: grayscale
  const data = deflateSync(filtered, { level: 9, strategy: constants.Z_RLE });
  return Buffer.concat([
    SIGNATURE,
    chunk('IHDR', header),
    chunk('IDAT', data),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** Each pixel less the Paeth predictor of its left, upper and upper-left neighbours (0 outside). */
function paeth(row: Uint8Array, above: Uint8Array | undefined, out: Uint8Array): void {
  for (let x = 0; x < row.length; x++) {
    const a = x > 0 ? row[x - 1]! : 0;
    const b = above ? above[x]! : 0;
    const c = above && x > 0 ? above[x - 1]! : 0;
    const p = a + b - c;
    const pa = Math.abs(p - a);
    const pb = Math.abs(p - b);
    const pc = Math.abs(p - c);
    const predicted = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
    out[x + 1] = (row[x]! - predicted) & 0xff;
  }
}

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}
