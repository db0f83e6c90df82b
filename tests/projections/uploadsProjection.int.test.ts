import { randomUUID } from 'node:crypto';
import { uploadStreams } from './uploadStreams';

const { pool, decide, receive, catchUp } = uploadStreams('uploads');

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
  const { rows } = await pool().query(
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

test('one batch of interleaved receipts and processing events ends as applying them one by one would', async () => {
  const [done, withSidecar, failed, deleted, waiting] = [1, 2, 3, 4, 5].map(() => randomUUID()) as [
    string,
    string,
    string,
    string,
    string,
  ];
  const at = (second: number) => `2026-02-01T00:00:${String(second).padStart(2, '0')}.000Z`;
  const claim = (uploadId: string, second: number) =>
    decide(uploadId, {
      type: 'ClaimUpload',
      data: { processorId: 'p1', now: at(second), leaseUntil: at(second + 30), maxAttempts: 3 },
    });
  await receive(done, 11);
  await decide(withSidecar, {
    type: 'ReceiveUpload',
    data: {
      uploadId: withSidecar,
      name: 'bold.nii.gz',
      filename: 'bold.nii.gz',
      sizeBytes: 10,
      sha256: 'ab'.repeat(32),
      mimeType: 'application/gzip',
      blobKey: `uploads/${withSidecar}.nii.gz`,
      uploaderId: 7,
      associatedBrainId: 12,
      receivedAt: at(1),
      sidecar: { RepetitionTime: 2, dims: 'from the sidecar' },
    },
  });
  await claim(done, 2);
  await receive(failed, 13);
  await claim(withSidecar, 3);
  await decide(done, {
    type: 'CompleteProcessing',
    data: {
      attempt: 1,
      metadata: { format: 'nifti', dims: [1, 2, 3] },
      previewBlobKey: `previews/${done}.png`,
      now: at(4),
    },
  });
  await receive(deleted, 14);
  await claim(failed, 5);
  await claim(deleted, 5);
  await decide(failed, {
    type: 'RenewProcessingLease',
    data: { attempt: 1, processorId: 'p1', now: at(6), leaseUntil: at(40) },
  });
  await decide(deleted, {
    type: 'DeleteUpload',
    data: { reason: 'brain_deleted', actor: { userId: 7, isStaff: false }, now: at(7) },
  });
  await decide(withSidecar, {
    type: 'CompleteProcessing',
    data: { attempt: 1, metadata: { format: 'nifti', dims: [4] }, previewBlobKey: null, now: at(8) },
  });
  await decide(failed, { type: 'FailProcessing', data: { attempt: 1, reason: 'not a NIfTI', now: at(9) } });
  await receive(waiting, 15);
  await catchUp(); // one batch: every event above
  const { rows } = await pool().query(
    `SELECT id, status, processing_started, processing_completed, metadata, extracted_metadata,
            preview_blob_key, revision FROM file_uploads WHERE id = ANY($1::uuid[]) ORDER BY associated_brain_id`,
    [[done, withSidecar, failed, deleted, waiting]],
  );
  expect(rows).toEqual([
    {
      id: done,
      status: 'completed',
      processing_started: new Date(at(2)),
      processing_completed: new Date(at(4)),
      metadata: { format: 'nifti', dims: [1, 2, 3] },
      extracted_metadata: { format: 'nifti', dims: [1, 2, 3] },
      preview_blob_key: `previews/${done}.png`,
      revision: '2',
    },
    {
      id: withSidecar,
      status: 'completed',
      processing_started: new Date(at(3)),
      processing_completed: new Date(at(8)),
      // The values read from the file win a clash; the sidecar's keys are listed.
      metadata: { RepetitionTime: 2, format: 'nifti', dims: [4], sidecar_keys: ['RepetitionTime', 'dims'] },
      extracted_metadata: { format: 'nifti', dims: [4] },
      preview_blob_key: null,
      revision: '2',
    },
    {
      id: failed,
      status: 'failed',
      processing_started: new Date(at(5)),
      processing_completed: new Date(at(9)),
      metadata: { error: 'not a NIfTI' },
      extracted_metadata: null,
      preview_blob_key: null,
      revision: '3',
    },
    {
      id: waiting,
      status: 'uploaded',
      processing_started: null,
      processing_completed: null,
      metadata: {},
      extracted_metadata: null,
      preview_blob_key: null,
      revision: '0',
    },
  ]);
});
