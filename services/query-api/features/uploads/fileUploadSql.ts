import type { Pool } from 'pg';
import type { Principal } from '#shared/auth/principal';
import { NotFoundError } from '#shared/errors/httpErrors';
import { canonicalUuid } from '#shared/http/ids';
import type { SqlConditions } from '#shared/query/sqlConditions';
import type { FileUploadRow } from '#shared/views/fileUploadViews';
import { sharedWithSql } from '#shared/query/uploadVisibility';

/** Uploads with their uploader and brain. */
export const UPLOAD_FROM = `FROM file_uploads f
  LEFT JOIN users u ON u.id = f.uploader_id
  LEFT JOIN brains b ON b.id = f.associated_brain_id`;

export const UPLOAD_SELECT = `
  SELECT f.id, f.name, f.filename, f.date_uploaded, f.uploader_id, u.username AS uploader_username,
    u.email AS uploader_email, f.status, f.processing_started, f.processing_completed, f.size_bytes,
    f.associated_brain_id, b.name AS brain_name, b.readable_id AS brain_readable_id, f.mime_type,
    f.metadata, f.preview_blob_key, f.blob_key, f.sha256, f.revision
  ${UPLOAD_FROM}`;

export interface UploadSqlRow extends FileUploadRow {
  readonly blob_key: string;
  readonly sha256: string;
  readonly revision: string;
}

/** Rows matching the conditions, in the given order. */
export async function findUploads(
  pool: Pool,
  filter: SqlConditions,
  tail: string,
  ...extra: unknown[]
): Promise<UploadSqlRow[]> {
  const { rows } = await pool.query<UploadSqlRow>(
    `${UPLOAD_SELECT} ${filter.whereSql} ${tail}`,
    filter.params(...extra),
  );
  return rows;
}

/**
 * The upload `id` as its uploader, staff or a collaborator of its brain may see it; 404 for anyone
 * else, as for an upload that does not exist, so ids of other people's files cannot be probed.
 */
export async function visibleUpload(pool: Pool, id: string, principal: Principal): Promise<UploadSqlRow> {
  const key = canonicalUuid(id);
  if (key === undefined) throw new NotFoundError();
  const { rows } = await pool.query<UploadSqlRow>(
    `${UPLOAD_SELECT} WHERE f.id = $1 AND (f.uploader_id = $2 OR $3 OR ${sharedWithSql('$2')})`,
    [key, principal.userId, principal.isStaff],
  );
  const row = rows[0];
  if (!row) throw new NotFoundError();
  return row;
}
