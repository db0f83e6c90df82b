import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { PostgresEventStore } from '../../shared/eventStore/postgres/postgresEventStore';
import { type GlobalPosition, comparePositions } from '../../shared/eventStore/eventStore';
import { createPostgresEventStore } from '../../shared/eventStore/postgres/postgresEventStore';
import { ProjectionRunner } from '../../shared/projections/projectionRunner';
import { decideUpload } from '../../shared/domain/uploads/decide';
import {
  type UploadEvent,
  type UploadState,
  uploadDecider,
  uploadStreamName,
} from '../../shared/domain/uploads/events';
import { fileUploadsProjection } from '../../services/projector/projections/fileUploadsProjection';
import { createTestDatabase } from '../support/testPostgres';

let store: PostgresEventStore;
let pool: pg.Pool;
let lastAppended: GlobalPosition | undefined;
const states = new Map<string, UploadState>();

beforeAll(async () => {
  const url = await createTestDatabase('uploads');
  store = createPostgresEventStore({ connectionString: url });
  await store.migrate();
  pool = new pg.Pool({ connectionString: url });
});
afterAll(async () => {
  await store.close();
  await pool.end();
});

async function decide(uploadId: string, command: Parameters<typeof decideUpload>[0]): Promise<void> {
  const state = states.get(uploadId) ?? uploadDecider.initialState();
  const events: UploadEvent[] = decideUpload(command, state);
  states.set(uploadId, events.reduce(uploadDecider.evolve, state));
  ({ position: lastAppended } = await store.appendToStream(
    uploadStreamName(uploadId),
    events.map((e) => ({
      id: randomUUID(),
      type: e.type,
      data: e.data,
      metadata: { actor: '7', requestId: null, correlationId: 'c', causationId: null, schemaVersion: 1 },
    })),
  ));
}

const receive = (uploadId: string, brainId: number) =>
  decide(uploadId, {
    type: 'ReceiveUpload',
    data: {
      uploadId,
      name: `scan-${brainId}.nii.gz`,
      filename: `scan-${brainId}.nii.gz`,
      sizeBytes: 3 * 2 ** 20,
      sha256: 'cd'.repeat(32),
      mimeType: 'application/gzip',
      blobKey: `uploads/${uploadId}.nii.gz`,
      uploaderId: 7,
      associatedBrainId: brainId,
      receivedAt: '2026-01-01T00:00:00.000Z',
    },
  });

/** Waits (bounded) until what this file appended is readable, then catches the projection up. */
async function catchUp(): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (lastAppended && comparePositions(await store.headPosition(), lastAppended) < 0) {
    if (Date.now() > deadline) throw new Error('the appended events never became readable');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await new ProjectionRunner({ store, pool, projections: [fileUploadsProjection] }).catchUp();
}

test('received uploads are rows in status uploaded; deleted ones are gone', async () => {
  const kept = randomUUID();
  const removed = randomUUID();
  await receive(kept, 1);
  await receive(removed, 2);
  await decide(removed, {
    type: 'DeleteUpload',
    data: { reason: 'brain_deleted', actor: { userId: 7, isStaff: false }, now: '2026-01-02T00:00:00Z' },
  });
  await catchUp();
  const { rows } = await pool.query(
    'SELECT id, name, filename, size_bytes, status, associated_brain_id, blob_key, metadata, processing_started FROM file_uploads',
  );
  expect(rows).toEqual([
    {
      id: kept,
      name: 'scan-1.nii.gz',
      filename: 'scan-1.nii.gz',
      size_bytes: String(3 * 2 ** 20),
      status: 'uploaded',
      associated_brain_id: 1,
      blob_key: `uploads/${kept}.nii.gz`,
      metadata: {},
      processing_started: null,
    },
  ]);
});
