import { PNG } from 'pngjs';

/**
 * An 8-bit grayscale PNG of `gray` (row-major, width × height), every row filtered "Paeth": a
 * preview is runs of equal pixels and rows repeated by the upscaling, which Paeth turns into zeros
 * (a row equal to the one above predicts each pixel from above). Left to choose (filterType -1),
 * pngjs tries all five filters on every row, which cost several times the rest of an inspection
 * (a small NIfTI's 1022×146 montage: 7.3 ms, 0.9 ms with Paeth alone; sizes within 0.3 %).
 */
const PAETH = 4;

export function encodeGrayPng(width: number, height: number, gray: Uint8Array): Buffer {
  const options = { colorType: 0, inputColorType: 0, inputHasAlpha: false, filterType: PAETH } as const;
  const png = new PNG({ width, height, ...options });
  png.data = Buffer.from(gray.buffer, gray.byteOffset, gray.byteLength);
  return PNG.sync.write(png, options);
}
