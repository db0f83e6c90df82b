import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sniffImage } from '#shared/media/sniffImage';
import { pngChunk } from './imageEncoders';

const fixture = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', 'images', name));

/** A copy of bytes with some of them changed. */
function patched(bytes: Buffer, at: number, replacement: number[]): Buffer {
  const copy = Buffer.from(bytes);
  copy.set(replacement, at);
  return copy;
}

describe('sniffImage recognises real files by content', () => {
  test.each([
    ['sample.png', 'png', 'image/png', 32, 16],
    ['sample.jpg', 'jpeg', 'image/jpeg', 16, 8],
    ['sample-exif-progressive.jpg', 'jpeg', 'image/jpeg', 16, 8],
    ['sample.gif', 'gif', 'image/gif', 3, 2],
    ['sample-lossless.webp', 'webp', 'image/webp', 4, 3],
    ['sample-lossy.webp', 'webp', 'image/webp', 1, 1],
    ['sample-extended.webp', 'webp', 'image/webp', 5, 7],
    ['sample.bmp', 'bmp', 'image/bmp', 5, 3],
    ['sample-topdown.bmp', 'bmp', 'image/bmp', 5, 3],
    ['sample-le.tif', 'tiff', 'image/tiff', 7, 5],
    ['sample-be.tif', 'tiff', 'image/tiff', 7, 5],
  ])('%s is %s (%s) of %ix%i', (name, format, mimeType, width, height) => {
    expect(sniffImage(fixture(name))).toEqual({ format, mimeType, width, height });
  });

  test('only the head is needed: a PNG cut right after its IHDR chunk is still a PNG', () => {
    expect(sniffImage(fixture('sample.png').subarray(0, 33))).toMatchObject({
      format: 'png',
      width: 32,
      height: 16,
    });
  });

  test('a BigTIFF header with 64-bit offsets and a LONG8 width', () => {
    const head = Buffer.alloc(16 + 8 + 2 * 20);
    head.write('II', 0, 'latin1');
    head.writeUInt16LE(43, 2);
    head.writeUInt16LE(8, 4);
    head.writeBigUInt64LE(16n, 8);
    head.writeBigUInt64LE(2n, 16);
    const entry = (at: number, tag: number, type: number, value: bigint) => {
      head.writeUInt16LE(tag, at);
      head.writeUInt16LE(type, at + 2);
      head.writeBigUInt64LE(1n, at + 4);
      head.writeBigUInt64LE(value, at + 12);
    };
    entry(24, 256, 16, 90_000n);
    entry(44, 257, 4, 70_000n);
    expect(sniffImage(head)).toEqual({
      format: 'tiff',
      mimeType: 'image/tiff',
      width: 90_000,
      height: 70_000,
    });
  });
});

describe('sniffImage refuses what is not a parsable image', () => {
  test('a text file renamed .png', () => {
    expect(sniffImage(fixture('not-an-image.png'))).toBeUndefined();
  });

  test.each([
    '',
    '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>',
    '%PDF-1.7\n',
    'GIF88a\u0003\u0000\u0002\u0000\u0000\u0000\u0000',
  ])('text or another format: %j', (text) => {
    expect(sniffImage(Buffer.from(text, 'latin1'))).toBeUndefined();
  });

  test('bytes that are no format at all', () => {
    let bytes = Buffer.alloc(0);
    for (let i = 0; bytes.length < 65536; i++)
      bytes = Buffer.concat([bytes, createHash('sha256').update(String(i)).digest()]);
    expect(sniffImage(bytes)).toBeUndefined();
  });

  test.each([
    'sample.png',
    'sample.jpg',
    'sample-exif-progressive.jpg',
    'sample.gif',
    'sample-lossless.webp',
    'sample-lossy.webp',
    'sample-extended.webp',
    'sample.bmp',
    'sample-le.tif',
    'sample-be.tif',
  ])('%s truncated before its dimensions', (name) => {
    const bytes = fixture(name);
    expect(sniffImage(bytes.subarray(0, 12))).toBeUndefined();
    expect(sniffImage(bytes.subarray(0, 2))).toBeUndefined();
  });

  describe('PNG', () => {
    const png = fixture('sample.png');
    const withIhdr = (width: number, height: number, depth: number, colourType: number) => {
      const ihdr = Buffer.alloc(13);
      ihdr.writeUInt32BE(width, 0);
      ihdr.writeUInt32BE(height, 4);
      ihdr.set([depth, colourType, 0, 0, 0], 8);
      return Buffer.concat([png.subarray(0, 8), pngChunk('IHDR', ihdr), png.subarray(33)]);
    };

    test('the helper builds a valid PNG header', () => {
      expect(sniffImage(withIhdr(3, 4, 8, 6))).toMatchObject({ format: 'png', width: 3, height: 4 });
    });
    test('an IHDR whose CRC does not match', () =>
      expect(sniffImage(patched(png, 19, [0x21]))).toBeUndefined());
    test('zero width, with a correct CRC', () => expect(sniffImage(withIhdr(0, 16, 8, 2))).toBeUndefined());
    test('zero height, with a correct CRC', () => expect(sniffImage(withIhdr(32, 0, 8, 2))).toBeUndefined());
    test('a bit depth its colour type cannot have', () =>
      expect(sniffImage(withIhdr(32, 16, 4, 2))).toBeUndefined());
    test('a first chunk that is not IHDR', () =>
      expect(sniffImage(patched(png, 12, [...Buffer.from('IDAT')]))).toBeUndefined());
  });

  describe('JPEG', () => {
    const jpeg = fixture('sample.jpg');
    const sof = jpeg.indexOf(Buffer.from([0xff, 0xc0]));

    test('a frame header with zero height', () =>
      expect(sniffImage(patched(jpeg, sof + 5, [0, 0]))).toBeUndefined());
    test('a frame header with zero width', () =>
      expect(sniffImage(patched(jpeg, sof + 7, [0, 0]))).toBeUndefined());
    test('a frame header whose length does not match its components', () =>
      expect(sniffImage(patched(jpeg, sof + 3, [12]))).toBeUndefined());
    test('scan data before any frame header', () => {
      const sofLength = jpeg.readUInt16BE(sof + 2);
      expect(
        sniffImage(Buffer.concat([jpeg.subarray(0, sof), jpeg.subarray(sof + 2 + sofLength)])),
      ).toBeUndefined();
    });
    test('SOI followed by garbage', () =>
      expect(
        sniffImage(Buffer.from([0xff, 0xd8, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00])),
      ).toBeUndefined());
  });

  describe('GIF, WebP, BMP, TIFF', () => {
    test('a GIF with zero width', () =>
      expect(sniffImage(patched(fixture('sample.gif'), 6, [0, 0]))).toBeUndefined());
    test('a lossy WebP without the VP8 start code', () =>
      expect(sniffImage(patched(fixture('sample-lossy.webp'), 23, [0, 0, 0]))).toBeUndefined());
    test('a lossy WebP frame that is not a key frame', () =>
      expect(sniffImage(patched(fixture('sample-lossy.webp'), 20, [0x31]))).toBeUndefined());
    test('a lossless WebP without the VP8L signature', () =>
      expect(sniffImage(patched(fixture('sample-lossless.webp'), 20, [0x2e]))).toBeUndefined());
    test('a RIFF file that is not WebP', () =>
      expect(
        sniffImage(patched(fixture('sample-lossless.webp'), 8, [...Buffer.from('AVI ')])),
      ).toBeUndefined());
    test('a BMP with zero width', () =>
      expect(sniffImage(patched(fixture('sample.bmp'), 18, [0, 0, 0, 0]))).toBeUndefined());
    test('a BMP with two colour planes', () =>
      expect(sniffImage(patched(fixture('sample.bmp'), 26, [2]))).toBeUndefined());
    test('a BMP with an unknown header size', () =>
      expect(sniffImage(patched(fixture('sample.bmp'), 14, [41]))).toBeUndefined());
    test('a TIFF whose first IFD lies beyond the head', () =>
      expect(sniffImage(patched(fixture('sample-le.tif'), 4, [0xff, 0xff]))).toBeUndefined());
    test('a TIFF without ImageLength', () => {
      const tiff = fixture('sample-be.tif');
      const ifd = tiff.readUInt32BE(4);
      expect(sniffImage(patched(tiff, ifd + 2 + 12, [0x01, 0x2c]))).toBeUndefined();
    });
    test('a TIFF with zero width', () => {
      const tiff = fixture('sample-le.tif');
      expect(sniffImage(patched(tiff, tiff.readUInt32LE(4) + 2 + 8, [0, 0]))).toBeUndefined();
    });
    test('a TIFF with an unknown byte order or version', () => {
      expect(sniffImage(patched(fixture('sample-le.tif'), 0, [...Buffer.from('IM')]))).toBeUndefined();
      expect(sniffImage(patched(fixture('sample-le.tif'), 2, [41]))).toBeUndefined();
    });
  });
});
