export interface InspectionLimits {
  /**
   * Bytes any one decoded buffer may hold (a TIFF strip, tile or band, a Zarr chunk, a zip entry, a
   * row of a volume): checked against what the format declares before it is allocated.
   */
  maxDecodedBytes: number;
  /** Bytes all the decompression of one inspection may produce together (gzip, zip, strips, chunks). */
  maxDecompressedBytes: number;
  /** Bytes one inspection may request from its source, as a multiple of the source's size. */
  maxReadFactor: number;
  /** Entries a zip's central directory may declare. */
  maxZipEntries: number;
  /** Voxels (or pixels) a preview may hold in memory across the slices it keeps. */
  maxPreviewVoxels: number;
  /** Pixels of one TIFF page (or Zarr plane) decoded for a preview. */
  maxPixels: number;
}

export const defaultInspectionLimits: Readonly<InspectionLimits> = Object.freeze({
  maxDecodedBytes: 256 * 2 ** 20,
  maxDecompressedBytes: 4 * 2 ** 30,
  maxReadFactor: 4,
  maxZipEntries: 100_000,
  maxPreviewVoxels: 8 * 2 ** 20,
  maxPixels: 64 * 2 ** 20,
});

/** A zip entry declaring more than this ratio of uncompressed to compressed bytes is a bomb. */
export const maxZipCompressionRatio = 200;

export function resolveLimits(partial: Partial<InspectionLimits> | undefined): InspectionLimits {
  return { ...defaultInspectionLimits, ...partial };
}
