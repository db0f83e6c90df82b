import {
  type Projection,
  type ProjectionContext,
  applyInOrder,
} from '../../../shared/projections/projection';
import type { UploadEvent } from '../../../shared/domain/uploads/events';

/**
 * Read model of file uploads: one row per live upload. Status columns are named for the states of
 * interface-spec 3.1 so processing can fill them in without a new shape.
 */
export const fileUploadsProjection: Projection = {
  name: 'file_uploads',
  version: 1,
  tables: ['file_uploads'],
  eventTypes: new Set(['UploadReceived', 'UploadDeleted']),

  async createTables({ client, table }) {
    const uploads = table('file_uploads');
    await client.query(`
      CREATE TABLE ${uploads} (
        id uuid PRIMARY KEY,
        name text NOT NULL,
        filename text NOT NULL,
        size_bytes bigint NOT NULL,
        sha256 text NOT NULL,
        mime_type text NOT NULL,
        blob_key text NOT NULL,
        uploader_id integer NOT NULL,
        associated_brain_id integer,
        status text NOT NULL,
        processing_started timestamptz,
        processing_completed timestamptz,
        metadata jsonb NOT NULL DEFAULT '{}',
        date_uploaded timestamptz NOT NULL,
        revision bigint NOT NULL
      )`);
    await client.query(`CREATE INDEX ON ${uploads} (uploader_id, date_uploaded DESC)`);
    await client.query(`CREATE INDEX ON ${uploads} (associated_brain_id)`);
  },

  apply: applyInOrder<UploadEvent>(async (ctx, event, recorded) => [
    await applyOne(ctx, event, recorded.streamRevision),
  ]),
};

async function applyOne(
  { client, table }: ProjectionContext,
  event: UploadEvent,
  revision: bigint,
): Promise<string> {
  switch (event.type) {
    case 'UploadReceived': {
      const d = event.data;
      await client.query(
        `INSERT INTO ${table('file_uploads')} (id, name, filename, size_bytes, sha256, mime_type, blob_key,
           uploader_id, associated_brain_id, status, date_uploaded, revision)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'uploaded', $10, $11)
         ON CONFLICT (id) DO NOTHING`,
        [
          d.uploadId,
          d.name,
          d.filename,
          d.sizeBytes,
          d.sha256,
          d.mimeType,
          d.blobKey,
          d.uploaderId,
          d.associatedBrainId,
          d.receivedAt,
          revision.toString(),
        ],
      );
      return `upload:${d.uploadId}`;
    }
    case 'UploadDeleted':
      await client.query(`DELETE FROM ${table('file_uploads')} WHERE id = $1`, [event.data.uploadId]);
      return `upload:${event.data.uploadId}`;
  }
}
