import { encodeGrayPng } from './encodeGrayPng';
import { intensityWindow, toGray } from './intensityWindow';

/** One 2-D image to show: values row-major (row 0 first), with its pixels' physical size. */
export interface Plane {
  readonly width: number;
  readonly height: number;
  readonly values: ArrayLike<number>;
  readonly pixelWidth: number;
  readonly pixelHeight: number;
  /** Show row 0 at the bottom (voxel axes point up, image rows point down). */
  readonly flipY: boolean;
}

export const maxPreviewSide = 1024;
/** A small montage is scaled up (by a whole factor, nearest neighbour) to at least this on its short side. */
export const minPreviewSide = 256;
const gap = 4;

/**
 * The whole factor a montage of this size is scaled up by: the least that brings its short side to
 * minPreviewSide, but never past maxPreviewSide on either side (1 when it is large enough already).
 */
export function previewUpscale(width: number, height: number): number {
  const wanted = Math.ceil(minPreviewSide / Math.max(1, Math.min(width, height)));
  const allowed = Math.floor(maxPreviewSide / Math.max(1, width, height));
  return Math.max(1, Math.min(wanted, allowed));
}

/**
 * The planes side by side in one grayscale PNG: one intensity window for all, each plane scaled by
 * its physical pixel size (so anisotropic voxels are not squashed), the whole at most
 * maxPreviewSide pixels on either side (nearest neighbour); a small one scaled up by a whole factor
 * (previewUpscale) so its short side is at least minPreviewSide where the long side allows it.
 */
export function renderPlanes(planes: readonly Plane[]): Buffer {
  const window = intensityWindow(planes.map((plane) => plane.values));
  const unit = Math.min(...planes.flatMap((plane) => [plane.pixelWidth, plane.pixelHeight]));
  const natural = planes.map((plane) => ({
    width: (plane.width * plane.pixelWidth) / unit,
    height: (plane.height * plane.pixelHeight) / unit,
  }));
  const gaps = gap * (planes.length - 1);
  const totalWidth = natural.reduce((sum, size) => sum + size.width, 0);
  const totalHeight = Math.max(...natural.map((size) => size.height));
  const scale = Math.min(1, (maxPreviewSide - gaps) / totalWidth, maxPreviewSide / totalHeight);
  // Rounding down keeps the sum within bounds; a panel never shrinks below one pixel.
  const sizes = natural.map((size) => ({
    width: Math.max(1, Math.floor(size.width * scale + 1e-9)),
    height: Math.max(1, Math.floor(size.height * scale + 1e-9)),
  }));
  const width = sizes.reduce((sum, size) => sum + size.width, 0) + gaps;
  const height = Math.max(...sizes.map((size) => size.height));
  const gray = new Uint8Array(width * height);
  let left = 0;
  planes.forEach((plane, index) => {
    const size = sizes[index] ?? { width: 1, height: 1 };
    drawPlane(gray, width, left, height - size.height, size, plane, (value) => toGray(value, window));
    left += size.width + gap;
  });
  const factor = previewUpscale(width, height);
  return factor === 1
    ? encodeGrayPng(width, height, gray)
    : encodeGrayPng(width * factor, height * factor, upscale(gray, width, height, factor));
}

/** Each pixel as a factor × factor block (the result is at most maxPreviewSide² bytes). */
function upscale(gray: Uint8Array, width: number, height: number, factor: number): Uint8Array {
  const outWidth = width * factor;
  const out = new Uint8Array(outWidth * height * factor);
  for (let row = 0; row < height; row++) {
    const line = out.subarray(row * factor * outWidth, (row * factor + 1) * outWidth);
    for (let column = 0; column < width; column++)
      line.fill(gray[row * width + column]!, column * factor, (column + 1) * factor);
    for (let copy = 1; copy < factor; copy++) out.set(line, (row * factor + copy) * outWidth);
  }
  return out;
}

function drawPlane(
  target: Uint8Array,
  targetWidth: number,
  left: number,
  top: number,
  size: { width: number; height: number },
  plane: Plane,
  gray: (value: number) => number,
): void {
  for (let row = 0; row < size.height; row++) {
    const sourceRow = Math.min(plane.height - 1, Math.floor(((row + 0.5) * plane.height) / size.height));
    const y = plane.flipY ? plane.height - 1 - sourceRow : sourceRow;
    for (let column = 0; column < size.width; column++) {
      const x = Math.min(plane.width - 1, Math.floor(((column + 0.5) * plane.width) / size.width));
      target[(top + row) * targetWidth + left + column] = gray(plane.values[y * plane.width + x] ?? NaN);
    }
  }
}

/** A usable physical pixel size: pixdim values of 0, negative or NaN count as 1. */
export function pixelSize(value: number | undefined): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : 1;
}
