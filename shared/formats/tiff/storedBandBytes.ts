import type { GeoTIFFImage } from 'geotiff';

/**
 * How many bytes the strips or tiles holding rows [top, bottom) occupy in the file, for the samples
 * read: geotiff fetches all of a band's blocks at once, so this is what one band holds before a
 * single block is decoded (block byte counts are the file's own, up to the file's size each).
 */
export async function storedBandBytes(
  page: GeoTIFFImage,
  samples: readonly number[],
): Promise<(top: number, bottom: number) => number> {
  const directory = page.getFileDirectory();
  const counts = (await directory.loadValue(page.isTiled ? 'TileByteCounts' : 'StripByteCounts')) as
    ArrayLike<number> | undefined;
  const blockHeight = Math.max(1, page.getTileHeight());
  const across = Math.ceil(page.getWidth() / Math.max(1, page.getTileWidth()));
  const down = Math.ceil(page.getHeight() / blockHeight);
  const planes = page.planarConfiguration === 2 ? samples : [0];
  return (top, bottom) => {
    let total = 0;
    for (const plane of planes) {
      for (let row = Math.floor(top / blockHeight); row < Math.ceil(bottom / blockHeight); row++) {
        for (let column = 0; column < across; column++) {
          total += Number(counts?.[(plane * down + row) * across + column] ?? 0);
        }
      }
    }
    return total;
  };
}
