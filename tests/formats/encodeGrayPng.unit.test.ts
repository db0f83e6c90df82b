import { PNG } from 'pngjs';
import { encodeGrayPng } from '#shared/formats/preview/encodeGrayPng';

/** The gray values a PNG decoder reads back (pngjs expands to RGBA). */
function decoded(png: Buffer): { width: number; height: number; gray: number[] } {
  const image = PNG.sync.read(png);
  const gray = Array.from({ length: image.width * image.height }, (_, i) => image.data[i * 4]!);
  return { width: image.width, height: image.height, gray };
}

function image(width: number, height: number, value: (x: number, y: number) => number): Uint8Array {
  const gray = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) gray[y * width + x] = value(x, y) & 0xff;
  return gray;
}

describe('encodeGrayPng', () => {
  it.each([
    ['one pixel', 1, 1, () => 200],
    ['one column', 1, 9, (_x: number, y: number) => y * 31],
    ['wrapping differences (0 next to 255)', 6, 4, (x: number, y: number) => ((x + y) % 2) * 255],
    [
      'repeated rows (a montage scaled up)',
      12,
      9,
      (x: number, y: number) => Math.floor(x / 3) * 60 + Math.floor(y / 3),
    ],
    ['noise', 37, 23, (x: number, y: number) => (x * 7919 + y * 104729) % 251],
  ])('%s: decodes to the same size and gray values', (_name, width, height, value) => {
    const gray = image(width, height, value);
    expect(decoded(encodeGrayPng(width, height, gray))).toEqual({ width, height, gray: Array.from(gray) });
  });

  it('encodes a view into a larger buffer from its own offset', () => {
    const whole = image(5, 3, (x, y) => x * 10 + y);
    const view = whole.subarray(5, 15); // rows 1 and 2
    expect(decoded(encodeGrayPng(5, 2, view)).gray).toEqual(Array.from(view));
  });

  it('a large scaled-up montage compresses to a few hundred bytes (repeated rows cost nothing)', () => {
    const png = encodeGrayPng(
      1022,
      146,
      image(1022, 146, (x, y) => Math.floor(x / 73) * 40 + Math.floor(y / 73) * 7),
    );
    expect(png.length).toBeLessThan(1000);
  });
});
