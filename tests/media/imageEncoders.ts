import { crc32, deflateSync } from 'node:zlib';

/**
 * Minimal but complete encoders for the fixtures in tests/fixtures/images (written by
 * writeImageFixtures.ts). Each produces a whole, decodable file, not just a header, and uses
 * node:zlib's CRC rather than the code under test.
 */

/** 8-bit RGB PNG with a colour gradient: signature, IHDR, zlib-compressed IDAT, IEND. */
export function encodePng(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // bit depth 8, colour type RGB, deflate, adaptive filter, no interlace
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3); // filter type 0 (None) per row
    for (let x = 0; x < width; x++) row.set([(x * 255) / width, (y * 255) / height, 128], 1 + x * 3);
    rows.push(row);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(Buffer.concat(rows))),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

export function pngChunk(type: string, data: Buffer): Buffer {
  const typeAndData = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typeAndData));
  return Buffer.concat([length, typeAndData, crc]);
}

/**
 * A 16x8 mid-light grey greyscale JPEG: two 8x8 blocks whose only non-zero coefficient is DC.
 * Flat quantisation (16) gives DC = 8 * (192 - 128) / 16 = 32, category 6. The Huffman tables are
 * custom and minimal (DC: categories 0 and 6, codes 00 and 01; AC: only EOB, code 0), as optimised
 * JPEGs do. Baseline (SOF0): block 1 = 01 100000 0, block 2 = 00 0, padded with 1s: 0x60 0x0F.
 * Progressive (SOF2): a single DC scan, 01 100000 then 00, padded: 0x60 0x3F.
 */
export function encodeJpeg(options: { progressive?: boolean; exif?: boolean } = {}): Buffer {
  const segment = (marker: number, body: number[]) => [
    0xff,
    marker,
    (body.length + 2) >> 8,
    (body.length + 2) & 0xff,
    ...body,
  ];
  const jfif = segment(0xe0, [...ascii('JFIF\0'), 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  // A real Exif block (TIFF header, empty IFD): the frame header must be found past APP segments.
  const exif = segment(0xe1, [...ascii('Exif\0\0'), ...ascii('II*\0'), 8, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  const dqt = segment(0xdb, [0x00, ...new Array<number>(64).fill(16)]);
  const sof = segment(options.progressive ? 0xc2 : 0xc0, [8, 0, 8, 0, 16, 1, 1, 0x11, 0]);
  const dcTable = [0x00, 0, 2, ...new Array<number>(14).fill(0), 0x00, 0x06];
  const acTable = [0x10, 1, ...new Array<number>(15).fill(0), 0x00];
  const dht = segment(0xc4, options.progressive ? dcTable : [...dcTable, ...acTable]);
  const sos = options.progressive
    ? segment(0xda, [1, 1, 0x00, 0, 0, 0])
    : segment(0xda, [1, 1, 0x00, 0, 63, 0]);
  const scan = options.progressive ? [0x60, 0x3f] : [0x60, 0x0f];
  const segments = [jfif, ...(options.exif ? [exif] : []), dqt, sof, dht, sos, scan];
  return Buffer.from([0xff, 0xd8, ...segments.flat(), 0xff, 0xd9]);
}

/**
 * A 3x2 GIF89a, two-colour palette, pixels alternating. LZW with minimum code size 2: every pixel
 * code is preceded by a CLEAR, so all codes stay 3 bits wide and no table entry is ever made.
 */
export function encodeGif(): Buffer {
  const pixels = [0, 1, 0, 1, 0, 1];
  const codes = [...pixels.flatMap((pixel) => [4, pixel]), 5]; // CLEAR = 4, END = 5
  const data = packLsbFirst(codes.flatMap((code) => [code, 3]));
  return Buffer.concat([
    Buffer.from('GIF89a', 'latin1'),
    Buffer.from([3, 0, 2, 0, 0x80, 0, 0]), // logical screen 3x2, global colour table of 2 entries
    Buffer.from([0, 0, 0, 255, 255, 255]), // black, white
    Buffer.from([0x2c, 0, 0, 0, 0, 3, 0, 2, 0, 0]), // image descriptor: 3x2 at (0,0)
    Buffer.from([2, data.length, ...data, 0]), // LZW minimum code size, one sub-block, terminator
    Buffer.from([0x3b]),
  ]);
}

/**
 * A lossless (VP8L) WebP of one solid colour: no transform, no colour cache, no meta codes, and
 * five single-symbol "simple" prefix codes, so the pixels themselves take zero bits.
 */
export function encodeWebpLossless(
  width: number,
  height: number,
  argb: [number, number, number, number],
): Buffer {
  return riffWebp([['VP8L', vp8lBitstream(width, height, argb)]]);
}

function vp8lBitstream(width: number, height: number, argb: [number, number, number, number]): Buffer {
  const [alpha, red, green, blue] = argb;
  // [value, bit count] pairs, flattened.
  const header = [width - 1, 14, height - 1, 14, alpha < 255 ? 1 : 0, 1, 0, 3]; // version 0
  const noExtras = [0, 1, 0, 1, 0, 1]; // no transform, no colour cache, no meta prefix codes
  const simpleCode = (symbol: number) => [1, 1, 0, 1, 1, 1, symbol, 8]; // simple, 1 symbol, 8 bits wide
  const literals = [green, red, blue, alpha].flatMap(simpleCode);
  const distance = [1, 1, 0, 1, 0, 1, 0, 1]; // simple, 1 symbol, 1 bit wide: 0
  return Buffer.from([0x2f, ...packLsbFirst([...header, ...noExtras, ...literals, ...distance])]);
}

/**
 * The widely used 1x1 lossy WebP of feature-detection scripts (Modernizr): VP8 key frame tag,
 * start code 9d 01 2a, 1x1. Self-consistent RIFF and chunk sizes; no local decoder to run it through.
 */
export const LOSSY_WEBP_1X1 = Buffer.from(
  'UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA',
  'base64',
);

/** Extended WebP: a VP8X chunk (canvas size, no feature flags) before the lossless bitstream. */
export function encodeWebpExtended(width: number, height: number): Buffer {
  const vp8x = Buffer.alloc(10);
  vp8x.writeUIntLE(width - 1, 4, 3);
  vp8x.writeUIntLE(height - 1, 7, 3);
  return riffWebp([
    ['VP8X', vp8x],
    ['VP8L', vp8lBitstream(width, height, [255, 10, 200, 30])],
  ]);
}

function riffWebp(chunks: [string, Buffer][]): Buffer {
  const body = chunks.flatMap(([type, data]) => {
    const header = Buffer.alloc(8);
    header.write(type, 0, 'latin1');
    header.writeUInt32LE(data.length, 4);
    return [header, data, Buffer.alloc(data.length % 2)]; // chunks are padded to even length
  });
  const payload = Buffer.concat([Buffer.from('WEBP'), ...body]);
  const riff = Buffer.alloc(8);
  riff.write('RIFF', 0, 'latin1');
  riff.writeUInt32LE(payload.length, 4);
  return Buffer.concat([riff, payload]);
}

/** 24-bit BMP with BITMAPINFOHEADER; topDown stores rows top-first (negative height). */
export function encodeBmp(width: number, height: number, options: { topDown?: boolean } = {}): Buffer {
  const rowBytes = Math.ceil((width * 3) / 4) * 4;
  const file = Buffer.alloc(14 + 40 + rowBytes * height);
  file.write('BM', 0, 'latin1');
  file.writeUInt32LE(file.length, 2);
  file.writeUInt32LE(14 + 40, 10);
  file.writeUInt32LE(40, 14);
  file.writeInt32LE(width, 18);
  file.writeInt32LE(options.topDown ? -height : height, 22);
  file.writeUInt16LE(1, 26); // planes
  file.writeUInt16LE(24, 28); // bits per pixel
  file.writeUInt32LE(rowBytes * height, 34);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) file.set([x * 40, y * 60, 200], 54 + y * rowBytes + x * 3);
  }
  return file;
}

/**
 * Uncompressed 8-bit greyscale TIFF, one strip: header, pixels at offset 8, then the IFD (tags in
 * ascending order, as the spec requires). Big-endian files store ImageWidth as LONG, little-endian
 * ones as SHORT, so both entry types are covered.
 */
export function encodeTiff(width: number, height: number, byteOrder: 'II' | 'MM'): Buffer {
  const little = byteOrder === 'II';
  const pixels = Buffer.from(Array.from({ length: width * height }, (_, i) => (i * 37) % 256));
  const ifdOffset = 8 + pixels.length + (pixels.length % 2);
  const entries: [tag: number, type: 3 | 4, value: number][] = [
    [256, little ? 3 : 4, width],
    [257, 3, height],
    [258, 3, 8], // BitsPerSample
    [259, 3, 1], // Compression: none
    [262, 3, 1], // PhotometricInterpretation: BlackIsZero
    [273, 4, 8], // StripOffsets
    [277, 3, 1], // SamplesPerPixel
    [278, 3, height], // RowsPerStrip
    [279, 4, pixels.length], // StripByteCounts
  ];
  const file = Buffer.alloc(ifdOffset + 2 + entries.length * 12 + 4);
  const u16 = (value: number, at: number) =>
    little ? file.writeUInt16LE(value, at) : file.writeUInt16BE(value, at);
  const u32 = (value: number, at: number) =>
    little ? file.writeUInt32LE(value, at) : file.writeUInt32BE(value, at);
  file.write(byteOrder, 0, 'latin1');
  u16(42, 2);
  u32(ifdOffset, 4);
  pixels.copy(file, 8);
  u16(entries.length, ifdOffset);
  entries.forEach(([tag, type, value], index) => {
    const at = ifdOffset + 2 + index * 12;
    u16(tag, at);
    u16(type, at + 2);
    u32(1, at + 4);
    if (type === 3)
      u16(value, at + 8); // a SHORT sits in the first two bytes of the value field
    else u32(value, at + 8);
  });
  return file; // next IFD offset: 0 (already zero)
}

function ascii(text: string): number[] {
  return [...Buffer.from(text, 'latin1')];
}

/** Packs flattened [value, bitCount] pairs least significant bit first, as GIF LZW and VP8L read them. */
function packLsbFirst(fields: number[]): number[] {
  const bytes: number[] = [];
  let bitPosition = 0;
  for (let field = 0; field + 1 < fields.length; field += 2) {
    const [value = 0, count = 0] = fields.slice(field, field + 2);
    for (let bit = 0; bit < count; bit++, bitPosition++) {
      const byteIndex = bitPosition >> 3;
      bytes[byteIndex] = (bytes[byteIndex] ?? 0) | (((value >> bit) & 1) << (bitPosition & 7));
    }
  }
  return bytes;
}
