import { constants, crc32, deflateRawSync } from 'node:zlib';

const segmentBytes = 16 * 2 ** 20;

/**
 * A deflate stream of `bytes` zeros (any size, gigabytes too) built without holding them: one
 * 16 MiB segment compressed once, ending in a full flush so it can be repeated as is, then an empty
 * final block. About 1 KiB per MiB: deflate's best ratio.
 */
export function deflatedZeros(bytes: number, wrapper: 'raw' | 'zlib' | 'gzip'): Buffer {
  const whole = Math.floor(bytes / segmentBytes);
  const segment = fullFlushed(Buffer.alloc(Math.min(bytes, segmentBytes)));
  const rest = bytes % segmentBytes;
  const parts = [
    ...Array.from({ length: whole }, () => segment),
    ...(rest > 0 && whole > 0 ? [fullFlushed(Buffer.alloc(rest))] : []),
    ...(whole === 0 ? [segment] : []),
    Buffer.from([0x03, 0x00]), // final, fixed Huffman, end of block at once
  ];
  const raw = Buffer.concat(parts);
  if (wrapper === 'raw') return raw;
  if (wrapper === 'zlib') {
    const adler = Buffer.alloc(4);
    adler.writeUInt32BE((((bytes % 65521) << 16) | 1) >>> 0);
    return Buffer.concat([Buffer.from([0x78, 0xda]), raw, adler]);
  }
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crcOfZeros(bytes), 0);
  trailer.writeUInt32LE(bytes % 2 ** 32, 4);
  const header = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 3]);
  return Buffer.concat([header, raw, trailer]);
}

/** A deflate stream of `data` that ends on a byte boundary with no final block: it can be chained. */
export function fullFlushed(data: Buffer): Buffer {
  return deflateRawSync(data, { level: 9, finishFlush: constants.Z_FULL_FLUSH });
}

function crcOfZeros(bytes: number): number {
  const zeros = Buffer.alloc(Math.min(bytes, segmentBytes));
  let crc = 0;
  for (let done = 0; done < bytes; done += zeros.length) {
    crc = crc32(zeros.subarray(0, Math.min(zeros.length, bytes - done)), crc);
  }
  return crc;
}
