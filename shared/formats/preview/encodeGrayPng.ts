import { PNG } from 'pngjs';

/** An 8-bit grayscale PNG of `gray` (row-major, width × height). */
export function encodeGrayPng(width: number, height: number, gray: Uint8Array): Buffer {
  const png = new PNG({ width, height, colorType: 0, inputColorType: 0, inputHasAlpha: false });
  png.data = Buffer.from(gray.buffer, gray.byteOffset, gray.byteLength);
  return PNG.sync.write(png, { colorType: 0, inputColorType: 0, inputHasAlpha: false });
}
