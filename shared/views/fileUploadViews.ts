import { type Static, Type } from '@sinclair/typebox';
import { Nullable } from './nullable';
import { StringEnum } from './stringEnum';

/** What an upload's status may be. */
export const UPLOAD_STATUSES = ['uploaded', 'processing', 'completed', 'failed'] as const;
export type UploadStatus = (typeof UPLOAD_STATUSES)[number];

/** What the representation needs: the read-model row with its uploader and brain joined. */
export interface FileUploadRow {
  readonly id: string;
  readonly name: string;
  readonly filename: string;
  readonly date_uploaded: Date | string;
  readonly uploader_id: number;
  readonly uploader_username: string | null;
  readonly uploader_email: string | null;
  readonly status: UploadStatus;
  readonly processing_started: Date | string | null;
  readonly processing_completed: Date | string | null;
  readonly size_bytes: string | number;
  readonly associated_brain_id: number | null;
  readonly brain_name: string | null;
  readonly brain_readable_id: string | null;
  readonly mime_type: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly preview_blob_key: string | null;
}

const iso = (d: Date | string): string => new Date(d).toISOString();
const isoOrNull = (d: Date | string | null): string | null => (d === null ? null : iso(d));
/** bytes / 2^shift, rounded to 2 decimals. */
const sizeIn = (bytes: number, shift: number): number => Math.round((bytes / 2 ** shift) * 100) / 100;

export const fileUploadDownloadUrl = (baseUrl: string, id: string): string =>
  `${baseUrl}/api/file-uploads/${id}/download/`;
export const fileUploadPreviewUrl = (baseUrl: string, id: string): string =>
  `${baseUrl}/api/file-uploads/${id}/preview/`;

/**
 * `s3_url` is where the bytes can be fetched: the service's download route, or a presigned
 * object-store URL when the store serves downloads itself (the caller decides).
 */
export function fileUploadJson(row: FileUploadRow, baseUrl: string, s3Url: string): FileUploadJson {
  const bytes = Number(row.size_bytes);
  return {
    id: row.id,
    name: row.name,
    filename: row.filename,
    date_uploaded: iso(row.date_uploaded),
    uploader: { id: row.uploader_id, username: row.uploader_username, email: row.uploader_email },
    status: row.status,
    processing_started: isoOrNull(row.processing_started),
    processing_completed: isoOrNull(row.processing_completed),
    file_size_mb: sizeIn(bytes, 20),
    file_size_kb: sizeIn(bytes, 10),
    associated_brain:
      row.associated_brain_id === null
        ? null
        : { id: row.associated_brain_id, name: row.brain_name, readable_id: row.brain_readable_id },
    mime_type: row.mime_type,
    s3_url: s3Url,
    metadata: row.metadata,
    preview_url: row.preview_blob_key === null ? null : fileUploadPreviewUrl(baseUrl, row.id),
  };
}

/** JSON representation of a file upload (interface-spec 2.8, decisions.md "File uploads"). */
export const fileUploadSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String({ description: 'The form field `name`, else the original file name.' }),
  filename: Type.String({ description: 'The original file name, reduced to its base name.' }),
  date_uploaded: Type.String({ format: 'date-time' }),
  // null until the accounts read model has the uploader.
  uploader: Type.Object({
    id: Type.Integer(),
    username: Nullable(Type.String()),
    email: Nullable(Type.String()),
  }),
  status: StringEnum(UPLOAD_STATUSES),
  processing_started: Nullable(
    Type.String({ format: 'date-time', description: 'null until processing starts.' }),
  ),
  processing_completed: Nullable(
    Type.String({ format: 'date-time', description: 'null until it completes or fails.' }),
  ),
  file_size_mb: Type.Number({ description: 'bytes / 2^20, rounded to 2 decimals.' }),
  file_size_kb: Type.Number({ description: 'bytes / 2^10, rounded to 2 decimals.' }),
  associated_brain: Nullable(
    // name and readable_id: null until the brains read model has the brain.
    Type.Object(
      { id: Type.Integer(), name: Nullable(Type.String()), readable_id: Nullable(Type.String()) },
      { description: 'The brain this is the file of; null for a standalone upload.' },
    ),
  ),
  mime_type: Type.String({ description: 'As the client sent it.' }),
  s3_url: Type.String({
    description:
      'Where to download the bytes: GET /api/file-uploads/{id}/download/, or a presigned object-store URL when S3_PRESIGNED_DOWNLOADS is on.',
  }),
  metadata: Type.Unsafe<Readonly<Record<string, unknown>>>({
    type: 'object',
    description:
      '{} until processing completes; then what the content says (format, shape, ...); `{"error": "..."}` when it failed.',
  }),
  preview_url: Nullable(
    Type.String({
      description: 'A PNG of the middle slices (GET /api/file-uploads/{id}/preview/); null until one exists.',
    }),
  ),
});
export type FileUploadJson = Static<typeof fileUploadSchema>;
