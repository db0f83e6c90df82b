import type { UploadFormat } from './inspection';

const byExtension: ReadonlyArray<readonly [string, UploadFormat]> = [
  ['.nii.gz', 'nifti'],
  ['.nii', 'nifti'],
  ['.tiff', 'tiff'],
  ['.tif', 'tiff'],
  ['.zarr', 'zarr'],
];

/** The format an upload claims by its name (case-insensitive), or undefined when unsupported. */
export function formatForFilename(filename: string): UploadFormat | undefined {
  const lower = filename.toLowerCase();
  return byExtension.find(([extension]) => lower.endsWith(extension))?.[1];
}
