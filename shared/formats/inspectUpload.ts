import { basename } from 'node:path';
import type { ByteSource } from './byteSource';
import { formatForFilename } from './formatForFilename';
import { FormatFailure } from './formatFailure';
import { PreviewSkipped } from './inspectionBudget';
import type { FormatReader, Inspection, Metadata, UploadFormat } from './inspection';
import { resolveLimits, type InspectionLimits } from './inspectionLimits';
import { NiftiReader } from './nifti/niftiReader';
import { ReadContext } from './readContext';
import { TiffReader } from './tiff/tiffReader';
import { ZarrReader } from './zarr/zarrReader';

export { formatForFilename } from './formatForFilename';
export type { ByteSource } from './byteSource';
export type { Inspection, Metadata, UploadFormat } from './inspection';
export type { InspectionLimits } from './inspectionLimits';

export interface InspectOptions {
  limits?: Partial<InspectionLimits>;
  signal?: AbortSignal;
}

/**
 * Reads an upload's real content: its metadata and a PNG preview. Bad content (corrupt, truncated,
 * mislabeled, empty, over a limit) resolves `{ ok: false, reason }`; a fault of the source itself
 * (it threw) or an abort rejects, so the caller can retry.
 *
 * In a worker thread, create the Worker with a `workerData` object (any object without a `mod`
 * key): geotiff's web-worker dependency reads workerData when loaded off the main thread and throws
 * when it is undefined.
 */
export function inspectUpload(
  source: ByteSource,
  filename: string,
  options?: InspectOptions,
): Promise<Inspection> {
  return inspect(source, filename, options ?? {}, true);
}

/** inspectUpload without the preview: the header (or directory) only. */
export function readMetadata(
  source: ByteSource,
  filename: string,
  options?: InspectOptions,
): Promise<Inspection> {
  return inspect(source, filename, options ?? {}, false);
}

async function inspect(
  source: ByteSource,
  filename: string,
  options: InspectOptions,
  withPreview: boolean,
): Promise<Inspection> {
  const format = formatForFilename(filename);
  if (!format) {
    return {
      ok: false,
      reason: `unsupported file type "${basename(filename)}": expected .nii, .nii.gz, .tif, .tiff or .zarr`,
    };
  }
  if (source.size === 0)
    return { ok: false, reason: `the file is empty (0 bytes): not a ${labels[format]} file` };
  const context = new ReadContext(source, resolveLimits(options.limits), options.signal);
  const reader = readerFor(format, context);
  try {
    const metadata = await reader.readMetadata();
    const preview = withPreview ? await previewWithinBudget(reader, metadata) : { png: null };
    options.signal?.throwIfAborted();
    return preview.skipped === undefined
      ? { ok: true, metadata, preview: preview.png }
      : { ok: true, metadata: { ...metadata, preview_skipped: preview.skipped }, preview: null };
  } catch (error) {
    if (context.isSourceFault(error)) throw error;
    options.signal?.throwIfAborted();
    return { ok: false, reason: reasonOf(error, format) };
  } finally {
    reader.close?.();
  }
}

/** A preview the budget refused up front leaves the upload complete, saying why it has no preview. */
async function previewWithinBudget(
  reader: FormatReader,
  metadata: Metadata,
): Promise<{ png: Buffer | null; skipped?: string }> {
  try {
    return { png: await reader.preview(metadata) };
  } catch (error) {
    if (error instanceof PreviewSkipped) return { png: null, skipped: error.message };
    throw error;
  }
}

const labels: Record<UploadFormat, string> = { nifti: 'NIfTI', tiff: 'TIFF', zarr: 'Zarr (zip)' };

function readerFor(format: UploadFormat, context: ReadContext): FormatReader {
  switch (format) {
    case 'nifti':
      return new NiftiReader(context);
    case 'tiff':
      return new TiffReader(context);
    case 'zarr':
      return new ZarrReader(context);
  }
}

function reasonOf(error: unknown, format: UploadFormat): string {
  if (error instanceof FormatFailure || error instanceof PreviewSkipped) return error.message;
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code.startsWith('Z_'))
    return `corrupt or truncated compressed data (${message})`;
  return `not a readable ${labels[format]} file: ${message}`;
}
