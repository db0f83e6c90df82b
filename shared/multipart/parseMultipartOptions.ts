import type { BlobStore } from '#shared/blobStore/blobStore';
import type { StoredFile } from './storedFile';

export interface FileFieldSpec {
  /** The BlobStore key of this file; called once, before any of its bytes is stored. */
  keyFor(info: { filename: string; mimeType: string }): string;
  /** Larger files are refused with 413 while streaming. */
  maxBytes: number;
}

export interface ParseMultipartOptions {
  blobStore: BlobStore;
  /** The only fields that may carry a file, each at most once. */
  files: Record<string, FileFieldSpec>;
  /** Default 100. */
  maxFields?: number;
  /** Per text field, default 64 KiB. */
  maxFieldBytes?: number;
  /** Bytes of each file kept in StoredFile.head, default 64 KiB. */
  headBytes?: number;
  /** How much of a rejected body is read and dropped so the client gets the error response; default 64 MiB. */
  maxDrainBytes?: number;
}

export interface ParsedMultipart {
  fields: Record<string, string>;
  files: Record<string, StoredFile>;
}

/** The options with every default filled in. */
export type MultipartSettings = Required<ParseMultipartOptions>;
