import { randomUUID } from 'node:crypto';
import { uploadStreams } from '#tests/projections/uploadStreams';

const { pool, decide, receive, catchUp } = uploadStreams('processing_read_model');

const claim = (uploadId: string, processorId: string, now: string, leaseUntil: string) =>
  decide(uploadId, { type: 'ClaimUpload', data: { processorId, now, leaseUntil, maxAttempts: 3 } });

async function row(uploadId: string): Promise<Record<string, unknown> | undefined> {
  const { rows } = await pool().query<Record<string, unknown>>(
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
