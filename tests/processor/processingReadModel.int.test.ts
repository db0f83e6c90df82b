import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { PostgresEventStore } from '../../shared/eventStore/postgres/postgresEventStore';
import { type GlobalPosition, comparePositions } from '../../shared/eventStore/eventStore';
import { createPostgresEventStore } from '../../shared/eventStore/postgres/postgresEventStore';
import { ProjectionRunner } from '../../shared/projections/projectionRunner';
import { type UploadCommand, decideUpload } from '../../shared/domain/uploads/decide';
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
  const url = await createTestDatabase('processing_read_model');
  store = createPostgresEventStore({ connectionString: url });
  await store.migrate();
  pool = new pg.Pool({ connectionString: url });
});
afterAll(async () => {
  await store.close();
  await pool.end();
});

async function decide(uploadId: string, command: UploadCommand): Promise<void> {
  const state = states.get(uploadId) ?? uploadDecider.initialState();
  const events: UploadEvent[] = decideUpload(command, state);
  states.set(uploadId, events.reduce(uploadDecider.evolve, state));
  ({ position: lastAppended } = await store.appendToStream(
    uploadStreamName(uploadId),
    events.map((e) => ({
      id: randomUUID(),
      type: e.type,
      data: e.data,
      metadata: { actor: 'system', requestId: null, correlationId: 'c', causationId: null, schemaVersion: 1 },
    })),
  ));
}

async function receive(uploadId: string): Promise<void> {
  await decide(uploadId, {
    type: 'ReceiveUpload',
    data: {
      uploadId,
      name: 'scan.nii.gz',
      filename: 'scan.nii.gz',
      sizeBytes: 1000,
      sha256: 'cd'.repeat(32),
      mimeType: 'application/gzip',
      blobKey: `uploads/${uploadId}.nii.gz`,
      uploaderId: 7,
      associatedBrainId: null,
      receivedAt: '2026-01-01T00:00:00.000Z',
    },
  });
}

const claim = (uploadId: string, processorId: string, now: string, leaseUntil: string) =>
  decide(uploadId, { type: 'ClaimUpload', data: { processorId, now, leaseUntil, maxAttempts: 3 } });

async function catchUp(): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (lastAppended && comparePositions(await store.headPosition(), lastAppended) < 0) {
    if (Date.now() > deadline) throw new Error('the appended events never became readable');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await new ProjectionRunner({ store, pool, projections: [fileUploadsProjection] }).catchUp();
}

async function row(uploadId: string): Promise<Record<string, unknown> | undefined> {
  const { rows } = await pool.query<Record<string, unknown>>(
    `SELECT status, processing_started, processing_completed, metadata, preview_blob_key
       FROM file_uploads WHERE id = $1`,
    [uploadId],
  );
  return rows[0];
}

test('processing fills status, start and end times, metadata or the error, and the preview key', async () => {
  const [done, broken, working, retaken, gone] = [
    randomUUID(),
    randomUUID(),
    randomUUID(),
    randomUUID(),
    randomUUID(),
  ];
  for (const id of [done, broken, working, retaken, gone]) await receive(id);
  await catchUp();
  expect(await row(done)).toEqual({
    status: 'uploaded',
    processing_started: null,
    processing_completed: null,
    metadata: {},
    preview_blob_key: null,
  });

  await claim(done, 'p1', '2026-01-02T00:00:00.000Z', '2026-01-02T00:01:00.000Z');
  await decide(done, {
    type: 'CompleteProcessing',
    data: {
      attempt: 1,
      metadata: { format: 'nifti', shape: [4, 5, 6] },
      previewBlobKey: `previews/${done}.png`,
      now: '2026-01-02T00:00:30.000Z',
    },
  });
  await claim(broken, 'p1', '2026-01-02T00:00:00.000Z', '2026-01-02T00:01:00.000Z');
  await decide(broken, {
    type: 'FailProcessing',
    data: { attempt: 1, reason: 'not a NIfTI file: bad sizeof_hdr 0', now: '2026-01-02T00:00:05.000Z' },
  });
  await claim(working, 'p1', '2026-01-02T00:00:00.000Z', '2026-01-02T00:01:00.000Z');
  await decide(working, {
    type: 'RenewProcessingLease',
    data: {
      attempt: 1,
      processorId: 'p1',
      now: '2026-01-02T00:00:40.000Z',
      leaseUntil: '2026-01-02T00:02:00.000Z',
    },
  });
  await claim(retaken, 'p1', '2026-01-02T00:00:00.000Z', '2026-01-02T00:01:00.000Z');
  await claim(retaken, 'p2', '2026-01-02T00:05:00.000Z', '2026-01-02T00:06:00.000Z');
  await claim(gone, 'p1', '2026-01-02T00:00:00.000Z', '2026-01-02T00:01:00.000Z');
  await decide(gone, {
    type: 'DeleteUpload',
    data: { reason: 'brain_deleted', actor: { userId: 7, isStaff: false }, now: '2026-01-02T00:00:10.000Z' },
  });
  await catchUp();

  expect(await row(done)).toEqual({
    status: 'completed',
    processing_started: new Date('2026-01-02T00:00:00.000Z'),
    processing_completed: new Date('2026-01-02T00:00:30.000Z'),
    metadata: { format: 'nifti', shape: [4, 5, 6] },
    preview_blob_key: `previews/${done}.png`,
  });
  expect(await row(broken)).toEqual({
    status: 'failed',
    processing_started: new Date('2026-01-02T00:00:00.000Z'),
    processing_completed: new Date('2026-01-02T00:00:05.000Z'),
    metadata: { error: 'not a NIfTI file: bad sizeof_hdr 0' },
    preview_blob_key: null,
  });
  expect(await row(working)).toMatchObject({
    status: 'processing',
    processing_completed: null,
    metadata: {},
  });
  expect(await row(retaken)).toMatchObject({
    status: 'processing',
    processing_started: new Date('2026-01-02T00:05:00.000Z'),
  });
  expect(await row(gone)).toBeUndefined();
});
