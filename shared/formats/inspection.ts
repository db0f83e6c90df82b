export type UploadFormat = 'nifti' | 'tiff' | 'zarr';

export type Metadata = Record<string, unknown> & { format: string };

export type Inspection =
  | { readonly ok: true; readonly metadata: Metadata; readonly preview: Buffer | null /* PNG */ }
  | { readonly ok: false; readonly reason: string /* for a person */ };

/** What every format reader offers: metadata alone (cheap), or metadata and a PNG preview. */
export interface FormatReader {
  readMetadata(): Promise<Metadata>;
  preview(metadata: Metadata): Promise<Buffer | null>;
}
