export interface InspectionLimits {
  /** Bytes any one decompression (gzip stream, zip entry) may produce. */
  maxDecompressedBytes: number;
  /** Entries a zip's central directory may declare. */
  maxZipEntries: number;
  /** Voxels (or pixels) a preview may hold in memory across the slices it keeps. */
  maxPreviewVoxels: number;
  /** Pixels of one TIFF page (or Zarr plane) decoded for a preview. */
  maxPixels: number;
}

export const defaultInspectionLimits: Readonly<InspectionLimits> = Object.freeze({
  maxDecompressedBytes: 16 * 2 ** 30,
  maxZipEntries: 100_000,
  maxPreviewVoxels: 8 * 2 ** 20,
  maxPixels: 64 * 2 ** 20,
});

/** A zip entry declaring more than this ratio of uncompressed to compressed bytes is a bomb. */
export const maxZipCompressionRatio = 200;

export function resolveLimits(partial: Partial<InspectionLimits> | undefined): InspectionLimits {
  return { ...defaultInspectionLimits, ...partial };
}
