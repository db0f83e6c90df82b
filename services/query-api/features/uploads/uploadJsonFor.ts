import type { BlobStore } from '#shared/blobStore/blobStore';
import { publicDownloadUrl } from '#shared/http/download/publicDownloadUrl';
import { fileUploadDownloadUrl, fileUploadJson } from '#shared/views/fileUploadViews';
import type { UploadSqlRow } from './fileUploadSql';

/** One upload as JSON, its s3_url presigned when the store serves downloads itself. */
export async function uploadJsonFor(blobs: BlobStore, row: UploadSqlRow, baseUrl: string) {
  const s3Url = await publicDownloadUrl(blobs, fileUploadDownloadUrl(baseUrl, row.id), {
    key: row.blob_key,
    filename: row.filename,
  });
  return fileUploadJson(row, baseUrl, s3Url);
}
