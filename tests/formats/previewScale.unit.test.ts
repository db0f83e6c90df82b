import { PNG } from 'pngjs';
import {
  maxPreviewSide,
  minPreviewSide,
  previewUpscale,
  renderPlanes,
  type Plane,
} from '#shared/formats/preview/renderPlanes';
import { readMontage } from './previewPng';

const plane = (width: number, height: number, fill: (x: number, y: number) => number): Plane => ({
  width,
  height,
  values: Array.from({ length: width * height }, (_, i) => fill(i % width, Math.floor(i / width))),
  pixelWidth: 1,
  pixelHeight: 1,
  flipY: false,
});

describe('preview scaling', () => {
  it('a 33×41×25 volume (115×41 px of slices) is scaled up so its short side is at least 256 px', () => {
    // The three middle slices of the example: 33×41, 33×25, 41×25 side by side.
    const checker = (x: number, y: number) => (x + y) % 2;
    const png = PNG.sync.read(
      renderPlanes([plane(33, 41, checker), plane(33, 25, checker), plane(41, 25, checker)]),
    );
    expect(Math.min(png.width, png.height)).toBeGreaterThanOrEqual(minPreviewSide);
    expect(Math.max(png.width, png.height)).toBeLessThanOrEqual(maxPreviewSide);
    expect([png.width, png.height]).toEqual([115 * 7, 41 * 7]);
  });

  it('nearest neighbour: every source pixel a whole block, a checkerboard stays sharp', () => {
    const bytes = renderPlanes([plane(10, 8, (x, y) => ((x + y) % 2) * 100)]);
    const montage = readMontage(bytes, 10, 8); // throws unless each pixel is a uniform block
    expect(montage.factor).toBe(32);
    for (let y = 0; y < 8; y++)
      for (let x = 0; x < 10; x++) expect(montage.gray(x, y)).toBe((x + y) % 2 ? 255 : 0);
  });

  it('never past the largest side: a long thin montage is scaled only as far as 1024 px allow', () => {
    expect(previewUpscale(600, 10)).toBe(1);
    expect(previewUpscale(300, 10)).toBe(3);
    expect(previewUpscale(256, 256)).toBe(1);
    expect(previewUpscale(1, 1)).toBe(256);
    const png = PNG.sync.read(renderPlanes([plane(300, 10, (x) => x)]));
    expect([png.width, png.height]).toEqual([900, 30]);
  });
});
