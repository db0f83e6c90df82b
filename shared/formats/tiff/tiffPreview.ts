import type { GeoTIFFImage } from 'geotiff';
import { maxPreviewSide, renderPlanes } from '#shared/formats/preview/renderPlanes';
import type { ReadContext } from '#shared/formats/readContext';
import { boundedCompressions, boundedDecoderPool } from './boundedDecoders';
import { storedBandBytes } from './storedBandBytes';

const bandPixels = 4 * 2 ** 20;

/**
 * The page downsampled (nearest neighbour) to at most maxPreviewSide on either side, read in bands
 * of whole strips or tile rows so memory stays at one band however large the page; only bands
 * holding a sampled row are decoded, each block by a bounded decoder. A band's memory (its decoded
 * blocks and the arrays they are copied into, and the stored blocks fetched for it) and the bytes
 * all bands inflate are checked against the inspection's budget before they are read. RGB becomes
 * luminance; min-is-white is inverted.
 */
export async function tiffPreview(
  page: GeoTIFFImage,
  pixelSize: { x: number; y: number },
  context: ReadContext,
): Promise<Buffer | null> {
  const directory = page.getFileDirectory();
  const compression = Number(directory.getValue('Compression') ?? 1);
  if (!boundedCompressions.has(compression)) return null;
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
  const bandHeight = bandHeightWithinBudget(page, samples, context);
  const bands = new Set(rows.map((row) => Math.floor(row / bandHeight)));
  if (compression !== 1) {
    context.budget.allowDecompressing(
      bands.size * bandHeight * paddedWidth(page) * page.getBytesPerPixel(),
      `the preview of a ${width}×${height} page`,
    );
  }
  const pool = boundedDecoderPool(context.budget, {
    kind: page.isTiled ? 'tile' : 'strip',
    rows: page.getTileHeight(),
  });
  const stored = await storedBandBytes(page, samples);
  for (const band of [...bands].sort((a, b) => a - b)) {
    const top = band * bandHeight;
    const bottom = Math.min(height, top + bandHeight);
    const bytes = stored(top, bottom);
    const blocks = page.isTiled ? 'tiles' : 'strips';
    context.budget.allowDecoded(
      bytes,
      `a band of rows ${top}-${bottom - 1} stored in ${bytes} bytes of ${blocks}`,
    );
    const wanted = rows.flatMap((row, index) => (row >= top && row < bottom ? [index] : []));
    const raster = (await page.readRasters({
      window: [0, top, width, bottom],
      samples,
      pool,
      signal: context.signal,
    })) as unknown as ArrayLike<number>[];
    for (const outRow of wanted) {
      const base = ((rows[outRow] ?? top) - top) * width;
      columns.forEach((column, outColumn) => {
        values[outRow * out.width + outColumn] = pixelValue(raster, base + column, photometric);
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

/**
 * Rows per band: whole strips or tile rows, about bandPixels pixels, within what the budget lets
 * one band hold; a page whose one strip or tile row is over it gets no preview (PreviewSkipped).
 */
function bandHeightWithinBudget(
  page: GeoTIFFImage,
  samples: readonly number[],
  context: ReadContext,
): number {
  const width = page.getWidth();
  const blockHeight = Math.max(1, page.getBlockHeight(0));
  const outBytes = samples.reduce((sum, sample) => sum + arrayBytes(page.getBitsPerSample(sample)), 0);
  const rowBytes = paddedWidth(page) * page.getBytesPerPixel() + width * outBytes;
  const blockRow = page.isTiled ? 'row of tiles' : 'strip';
  context.budget.allowDecoded(
    rowBytes * blockHeight,
    `one ${blockRow} of the page (${width}×${blockHeight} pixels, ${rowBytes * blockHeight} bytes decoded)`,
  );
  const byPixels = Math.floor(bandPixels / (width * blockHeight));
  const byBytes = Math.floor(context.limits.maxDecodedBytes / (rowBytes * blockHeight));
  return blockHeight * Math.max(1, Math.min(byPixels, byBytes));
}

/** The page's width rounded up to whole tiles: what a row of tiles decodes to. */
function paddedWidth(page: GeoTIFFImage): number {
  const tileWidth = page.getTileWidth();
  return Math.ceil(page.getWidth() / tileWidth) * tileWidth;
}

/** Bytes per value of the typed array geotiff reads a sample of `bits` into. */
function arrayBytes(bits: number): number {
  return bits <= 8 ? 1 : bits <= 16 ? 2 : bits <= 32 ? 4 : 8;
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
