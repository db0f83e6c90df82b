import { PNG } from 'pngjs';
import { previewUpscale } from '#shared/formats/preview/renderPlanes';

/** A preview at its montage's own size: what the assertions about slices and positions read. */
export interface Montage {
  readonly width: number;
  readonly height: number;
  /** How many times the PNG scales the montage up. */
  readonly factor: number;
  /** The gray value of the montage's pixel (x, y). */
  readonly gray: (x: number, y: number) => number;
}

/**
 * Reads a preview PNG that should be a `width` × `height` montage scaled up by previewUpscale: it
 * throws unless the PNG has exactly that size and every montage pixel is a uniform factor × factor
 * block (nearest neighbour), then reads values at the montage's own coordinates.
 */
export function readMontage(preview: Buffer, width: number, height: number): Montage {
  const png = PNG.sync.read(preview);
  const factor = previewUpscale(width, height);
  if (png.width !== width * factor || png.height !== height * factor)
    throw new Error(
      `expected a ${width}×${height} montage scaled ×${factor} (${width * factor}×${height * factor}), got ${png.width}×${png.height}`,
    );
  const at = (x: number, y: number) => png.data[(y * png.width + x) * 4]!;
  for (let y = 0; y < png.height; y++)
    for (let x = 0; x < png.width; x++)
      if (at(x, y) !== at(x - (x % factor), y - (y % factor)))
        throw new Error(`pixel (${x}, ${y}) differs from its ${factor}×${factor} block`);
  return { width, height, factor, gray: (x, y) => at(x * factor, y * factor) };
}
