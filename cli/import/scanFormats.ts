import path from 'node:path';

/** The extensions the server takes (decisions.md "File uploads"), longest first, lowercase. */
export const SCAN_EXTENSIONS = ['.nii.gz', '.nii', '.tiff', '.tif', '.zarr'] as const;

/** The supported extension of a file name (case-insensitive), else undefined. */
export function scanExtension(fileName: string): string | undefined {
  const lower = fileName.toLowerCase();
  return SCAN_EXTENSIONS.find((ext) => lower.endsWith(ext) && lower.length > ext.length);
}

/** A brain's name from its file: the base name without its scan extension (`sub-01_T1w.nii.gz` → `sub-01_T1w`). */
export function nameFromFile(file: string): string {
  const base = path.basename(file);
  const ext = scanExtension(base);
  return ext ? base.slice(0, base.length - ext.length) : base;
}

/** Relative paths as the state file and Idempotency-Keys name them: forward slashes on every platform. */
export const portablePath = (relative: string): string => relative.split(path.sep).join('/');
