/** A file of a multipart request, already durable in the BlobStore. */
export interface StoredFile {
  /** The form field it came in. */
  readonly field: string;
  /** Its BlobStore key. */
  readonly key: string;
  /** The client's file name reduced to its base name ('' when the client sent none). */
  readonly filename: string;
  /** The content type as the client sent it: a claim, not a fact (see shared/media/sniffImage). */
  readonly mimeType: string;
  readonly size: number;
  /** Lowercase hex SHA-256 of the stored bytes. */
  readonly sha256: string;
  /** The first bytes (headBytes, default 64 KiB) of the file, for content sniffing. */
  readonly head: Buffer;
}
