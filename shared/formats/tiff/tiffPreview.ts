import type { GeoTIFFImage } from 'geotiff';
import { maxPreviewSide, renderPlanes } from '../preview/renderPlanes';

/** Compressions geotiff decodes in Node (webp needs a browser; the CCITT and JPEG 2000 ones it lacks). */
const decodable = new Set([1, 5, 7, 8, 32773, 32946, 34887, 50000]);
const bandPixels = 4 * 2 ** 20;
const maxBandPixels = 16 * 2 ** 20;

/**
 * The page downsampled (nearest neighbour) to at most maxPreviewSide on either side, read in bands
 * of whole strips or tile rows so memory stays at one band however large the page; only bands
 * holding a sampled row are decoded (a page whose one strip or tile row exceeds maxBandPixels gets
 * no preview). RGB becomes luminance; min-is-white is inverted.
 */
export async function tiffPreview(
  page: GeoTIFFImage,
  pixelSize: { x: number; y: number },
  signal: AbortSignal | undefined,
): Promise<Buffer | null> {
  const directory = page.getFileDirectory();
  if (!decodable.has(Number(directory.getValue('Compression') ?? 1))) return null;
  const width = page.getWidth();
  const height = page.getHeight();
  const photometric = Number(directory.getValue('PhotometricInterpretation') ?? 1);
  const samples = photometric === 2 && page.getSamplesPerPixel() >= 3 ? [0, 1, 2] : [0];
  const scale = Math.min(1, maxPreviewSide / width, maxPreviewSide / height);
  const out = {
    width: Math.max(1, Math.floor(width * scale)),
    height: Math.max(1, Math.floor(height * scale)),
  };
  const rows = sampled(out.height, height);
  const columns = sampled(out.width, width);
  const values = new Float32Array(out.width * out.height);
  const blockHeight = Math.max(1, page.getBlockHeight(0));
  if (width * blockHeight > maxBandPixels) return null; // one strip or tile row alone is too big
  const bandHeight = blockHeight * Math.max(1, Math.floor(bandPixels / (width * blockHeight)));
  for (let top = 0; top < height; top += bandHeight) {
    const bottom = Math.min(height, top + bandHeight);
    const wanted = rows.flatMap((row, index) => (row >= top && row < bottom ? [index] : []));
    if (wanted.length === 0) continue;
    const band = (await page.readRasters({
      window: [0, top, width, bottom],
      samples,
      signal,
    })) as unknown as ArrayLike<number>[];
    for (const outRow of wanted) {
      const base = ((rows[outRow] ?? top) - top) * width;
      columns.forEach((column, outColumn) => {
        values[outRow * out.width + outColumn] = pixelValue(band, base + column, photometric);
      });
    }
  }
  const plane = {
    ...out,
    values,
    pixelWidth: (pixelSize.x * width) / out.width,
    pixelHeight: (pixelSize.y * height) / out.height,
    flipY: false,
  };
  return renderPlanes([plane]);
}

/** For each of `count` output positions, the source index it samples (centres, nearest). */
function sampled(count: number, size: number): number[] {
  return Array.from({ length: count }, (_, index) =>
    Math.min(size - 1, Math.floor(((index + 0.5) * size) / count)),
  );
}

function pixelValue(band: ArrayLike<number>[], index: number, photometric: number): number {
  if (band.length >= 3) {
    return (
      0.299 * (band[0]?.[index] ?? 0) + 0.587 * (band[1]?.[index] ?? 0) + 0.114 * (band[2]?.[index] ?? 0)
    );
  }
  const value = band[0]?.[index] ?? NaN;
  return photometric === 0 ? -value : value;
}
