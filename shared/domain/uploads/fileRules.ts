/** The supported formats (interface-spec 2.8), by extension, case-insensitively. */
const SUPPORTED = /\.(nii\.gz|nii|zarr|tiff?)$/i;
const TIFF = /\.tiff?$/i;

export const UNSUPPORTED_FORMAT = 'Unsupported file format: use .nii, .nii.gz, .zarr, .tif or .tiff.';
export const TIFF_ONLY = 'The image must be a TIFF file (.tif or .tiff).';

/** The file's supported extension in lowercase (".nii.gz"), or undefined when it is not supported. */
export function uploadExtension(filename: string): string | undefined {
  return SUPPORTED.exec(filename)?.[0]?.toLowerCase();
}

export const isTiffName = (filename: string): boolean => TIFF.test(filename);

/** What is wrong with a file name for a form field: `image` takes TIFF only, `file` any supported format. */
export function fileNameProblem(field: 'file' | 'image', filename: string): string | undefined {
  if (field === 'image') return isTiffName(filename) ? undefined : TIFF_ONLY;
  return uploadExtension(filename) ? undefined : UNSUPPORTED_FORMAT;
}
