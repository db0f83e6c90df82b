import type { RecordedEvent } from '#shared/eventStore/eventStore';
import type { Projection, ProjectionContext } from '#shared/projections/projection';
import {
  type UploadEvent,
  type UploadReceived,
  type UploadAttachedToBrain,
  UPLOAD_PROCESSING_EVENT_TYPES,
} from '#shared/domain/uploads/events';
import { type BidsSidecar, combinedSidecar, metadataWithSidecar } from '#shared/domain/uploads/sidecar';

/**
 * Read model of file uploads: one row per live upload, its processing status (interface-spec 3.1),
 * when processing started and ended, the metadata (`{error}` when it failed) and the preview's key.
 * Lease renewals change nothing here. Processing events of a deleted upload find no row.
 * v3: `sidecar` (a BIDS sidecar, given with the file or at attach) and `extracted_metadata` (what
 * processing read) are kept apart, and `metadata` is their merge (shared/domain/uploads/sidecar);
 * UploadAttachedToBrain sets the brain of an upload made on its own.
 */
export const uploadsProjection: Projection = {
  // The stored names stay: the checkpoints' key and metrics label (a new name would install live with
  // empty tables), and the view `file_uploads` that queries, the processor and the blob sweep read.
  name: 'file_uploads',
  version: 3,
  tables: ['file_uploads'],
  eventTypes: new Set([
    'UploadReceived',
    'UploadAttachedToBrain',
    'UploadDeleted',
    ...UPLOAD_PROCESSING_EVENT_TYPES,
  ]),

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
        sidecar jsonb,
        extracted_metadata jsonb,
        preview_blob_key text,
        date_uploaded timestamptz NOT NULL,
        revision bigint NOT NULL
      )`);
    await client.query(`CREATE INDEX ON ${uploads} (uploader_id, date_uploaded DESC)`);
    await client.query(`CREATE INDEX ON ${uploads} (associated_brain_id)`);
  },

  apply: async (ctx, events) => {
    const changed: string[] = [];
    let segment: RecordedEvent[] = [];
    const flush = async (): Promise<void> => {
      if (segment.length > 0) changed.push(...(await applySegment(ctx, segment)));
      segment = [];
    };
    for (const recorded of events) {
      if (SEGMENT_TYPES.has(recorded.type)) {
        segment.push(recorded);
        continue;
      }
      await flush();
      const event = { type: recorded.type, data: recorded.data } as UploadEvent;
      changed.push(...(await applyOne(ctx, event, recorded.streamRevision)));
    }
    await flush();
    return changed;
  },
};

/**
 * What a segment may hold: receipts and processing events, which a batch applies set-based
 * (applySegment). Attaching and deleting are applied one by one, in order, between segments.
 */
const SEGMENT_TYPES: ReadonlySet<string> = new Set(['UploadReceived', ...UPLOAD_PROCESSING_EVENT_TYPES]);

/** A processing column's SQL type, for reading it back from the JSON of a set-based update. */
const PROCESSING_COLUMN_TYPES: Readonly<Record<ProcessingColumn, string>> = {
  status: 'text',
  processing_started: 'timestamptz',
  processing_completed: 'timestamptz',
  metadata: 'jsonb',
  extracted_metadata: 'jsonb',
  preview_blob_key: 'text',
  sidecar: 'jsonb',
  associated_brain_id: 'integer',
};

/** One upload's processing events of a segment, folded: each column as the last event set it. */
interface FoldedUpload {
  revision: bigint;
  columns: Partial<Record<ProcessingColumn, string | null>>;
  /** What processing read, when the upload's last outcome is a completion: merged with its sidecar. */
  completed: Readonly<Record<string, unknown>> | undefined;
}

/**
 * A run of receipts and processing events in three statements at most, whatever its length: the
 * receipts in one INSERT, then every upload's processing events folded into the columns the last
 * of them set, in one UPDATE, then, for completed uploads that carry a sidecar, their merged
 * metadata. Receipts go first: an upload's processing events follow its receipt in its stream,
 * hence in the batch, and rows of different uploads do not interact. The sidecar only changes on a
 * receipt (applied first) or an attach (never inside a segment), so the merge reads the right one.
 */
async function applySegment(ctx: ProjectionContext, recorded: readonly RecordedEvent[]): Promise<string[]> {
  const changed: string[] = [];
  const received = recorded.filter((r) => r.type === 'UploadReceived');
  if (received.length > 0)
    changed.push(
      ...(await receiveUploads(
        ctx,
        received.map((r) => ({ type: r.type, data: r.data }) as UploadReceived),
        received.map((r) => r.streamRevision),
      )),
    );
  const folded = new Map<string, FoldedUpload>();
  const fold = (
    uploadId: string,
    revision: bigint,
    columns: FoldedUpload['columns'],
    completed?: FoldedUpload['completed'] | null,
  ): void => {
    const entry = folded.get(uploadId) ?? { revision, columns: {}, completed: undefined };
    entry.revision = revision;
    Object.assign(entry.columns, columns);
    if (completed !== undefined) entry.completed = completed ?? undefined;
    folded.set(uploadId, entry);
    changed.push(`upload:${uploadId}`);
  };
  for (const r of recorded) {
    const event = { type: r.type, data: r.data } as UploadEvent;
    switch (event.type) {
      case 'UploadProcessingStarted':
        fold(event.data.uploadId, r.streamRevision, {
          status: 'processing',
          processing_started: event.data.startedAt,
          processing_completed: null,
        });
        break;
      case 'UploadProcessingCompleted':
        fold(
          event.data.uploadId,
          r.streamRevision,
          {
            status: 'completed',
            processing_completed: event.data.completedAt,
            metadata: JSON.stringify(event.data.metadata),
            extracted_metadata: JSON.stringify(event.data.metadata),
            preview_blob_key: event.data.previewBlobKey,
          },
          event.data.metadata,
        );
        break;
      case 'UploadProcessingFailed':
        fold(
          event.data.uploadId,
          r.streamRevision,
          {
            status: 'failed',
            processing_completed: event.data.completedAt,
            metadata: JSON.stringify({ error: event.data.reason }),
            preview_blob_key: null,
          },
          null,
        );
        break;
      default: // a receipt (above) or a lease renewal (changes no row)
        break;
    }
  }
  if (folded.size === 0) return changed;
  const uploads = table(ctx, 'file_uploads');
  const assignments = (Object.keys(PROCESSING_COLUMN_TYPES) as ProcessingColumn[])
    .map(
      (column) =>
        `${column} = CASE WHEN v.columns ? '${column}' THEN (v.columns->>'${column}')::${PROCESSING_COLUMN_TYPES[column]} ELSE u.${column} END`,
    )
    .join(',\n         ');
  const rows = [...folded].map(([id, entry]) => ({
    id,
    revision: entry.revision.toString(),
    columns: entry.columns,
    completed: entry.completed !== undefined,
  }));
  // The metadata of a completion is what processing read; those with a sidecar are merged next.
  const { rows: withSidecars } = await ctx.client.query<{ id: string; sidecar: BidsSidecar }>(
    `UPDATE ${uploads} AS u
        SET ${assignments},
            revision = v.revision
       FROM json_to_recordset($1::json) AS v(id uuid, revision bigint, columns jsonb, completed boolean)
      WHERE u.id = v.id
      RETURNING u.id, CASE WHEN v.completed AND u.sidecar IS NOT NULL AND u.sidecar <> '{}'::jsonb
                           THEN u.sidecar END AS sidecar`,
    [JSON.stringify(rows)],
  );
  const merged = withSidecars
    .filter((row) => row.sidecar !== null)
    .map((row) => ({
      id: row.id,
      metadata: metadataWithSidecar(folded.get(row.id)!.completed!, row.sidecar),
    }));
  if (merged.length > 0)
    await ctx.client.query(
      `UPDATE ${uploads} AS u SET metadata = v.metadata
         FROM json_to_recordset($1::json) AS v(id uuid, metadata jsonb)
        WHERE u.id = v.id`,
      [JSON.stringify(merged)],
    );
  return changed;
}

const table = ({ table }: ProjectionContext, name: string): string => table(name);

const RECEIVED_COLUMNS = `id, name, filename, size_bytes, sha256, mime_type, blob_key, uploader_id,
  associated_brain_id, status, date_uploaded, sidecar, revision`;

/**
 * Received uploads in one statement (rows as a JSON array of column → value): a rebuild replays
 * one per brain. A replayed one is already there and stays as it is.
 */
async function receiveUploads(
  { client, table }: ProjectionContext,
  received: readonly UploadReceived[],
  revisions: readonly bigint[],
): Promise<string[]> {
  const rows = received.map(({ data: d }, i) => ({
    id: d.uploadId,
    name: d.name,
    filename: d.filename,
    size_bytes: d.sizeBytes,
    sha256: d.sha256,
    mime_type: d.mimeType,
    blob_key: d.blobKey,
    uploader_id: d.uploaderId,
    associated_brain_id: d.associatedBrainId,
    status: 'uploaded',
    date_uploaded: d.receivedAt,
    sidecar: d.sidecar ?? null,
    revision: revisions[i]!.toString(),
  }));
  await client.query(
    `INSERT INTO ${table('file_uploads')} (${RECEIVED_COLUMNS})
     SELECT ${RECEIVED_COLUMNS} FROM json_populate_recordset(NULL::${table('file_uploads')}, $1::json)
     ON CONFLICT (id) DO NOTHING`,
    [JSON.stringify(rows)],
  );
  return received.map(({ data }) => `upload:${data.uploadId}`);
}

/** The changed keys: a lease renewal changes no row (caches keep what they hold). */
async function applyOne(
  ctx: ProjectionContext,
  event: UploadEvent,
  revision: bigint,
): Promise<readonly string[]> {
  const { client, table } = ctx;
  switch (event.type) {
    case 'UploadReceived':
      return receiveUploads(ctx, [event], [revision]);
    case 'UploadAttachedToBrain':
      await attach(ctx, event.data, revision);
      return [`upload:${event.data.uploadId}`];
    case 'UploadDeleted':
      await client.query(`DELETE FROM ${table('file_uploads')} WHERE id = $1`, [event.data.uploadId]);
      return [`upload:${event.data.uploadId}`];
    case 'UploadProcessingStarted':
      await update(ctx, event.data.uploadId, revision, {
        status: 'processing',
        processing_started: event.data.startedAt,
        processing_completed: null,
      });
      return [`upload:${event.data.uploadId}`];
    case 'UploadProcessingLeaseRenewed':
      return [];
    case 'UploadProcessingCompleted':
      await update(ctx, event.data.uploadId, revision, {
        status: 'completed',
        processing_completed: event.data.completedAt,
        metadata: JSON.stringify(
          metadataWithSidecar(event.data.metadata, (await rowOf(ctx, event.data.uploadId))?.sidecar),
        ),
        extracted_metadata: JSON.stringify(event.data.metadata),
        preview_blob_key: event.data.previewBlobKey,
      });
      return [`upload:${event.data.uploadId}`];
    case 'UploadProcessingFailed':
      await update(ctx, event.data.uploadId, revision, {
        status: 'failed',
        processing_completed: event.data.completedAt,
        metadata: JSON.stringify({ error: event.data.reason }),
        preview_blob_key: null,
      });
      return [`upload:${event.data.uploadId}`];
  }
}

type ProcessingColumn =
  | 'status'
  | 'processing_started'
  | 'processing_completed'
  | 'metadata'
  | 'extracted_metadata'
  | 'preview_blob_key'
  | 'sidecar'
  | 'associated_brain_id';

interface SidecarRow {
  readonly status: string;
  readonly sidecar: BidsSidecar | null;
  readonly extracted_metadata: Record<string, unknown> | null;
}

async function rowOf(
  { client, table }: ProjectionContext,
  uploadId: string,
): Promise<SidecarRow | undefined> {
  const { rows } = await client.query<SidecarRow>(
    `SELECT status, sidecar, extracted_metadata FROM ${table('file_uploads')} WHERE id = $1`,
    [uploadId],
  );
  return rows[0];
}

/** The upload's brain, and its sidecar merged in at once when processing has already completed. */
async function attach(
  ctx: ProjectionContext,
  data: UploadAttachedToBrain['data'],
  revision: bigint,
): Promise<void> {
  const row = await rowOf(ctx, data.uploadId);
  if (!row) return;
  const sidecar = combinedSidecar(row.sidecar, data.sidecar);
  const completed = row.status === 'completed' && row.extracted_metadata !== null;
  await update(ctx, data.uploadId, revision, {
    associated_brain_id: String(data.associatedBrainId),
    sidecar: sidecar && JSON.stringify(sidecar),
    ...(completed ? { metadata: JSON.stringify(metadataWithSidecar(row.extracted_metadata, sidecar)) } : {}),
  });
}

/** Sets some processing columns of one row, tagged with the revision of the event that set them. */
async function update(
  { client, table }: ProjectionContext,
  uploadId: string,
  revision: bigint,
  columns: Partial<Record<ProcessingColumn, string | null>>,
): Promise<void> {
  const entries = Object.entries(columns);
  const assignments = entries.map(([column], i) => `${column} = $${i + 3}`).join(', ');
  await client.query(`UPDATE ${table('file_uploads')} SET ${assignments}, revision = $2 WHERE id = $1`, [
    uploadId,
    revision.toString(),
    ...entries.map(([, value]) => value),
  ]);
}
