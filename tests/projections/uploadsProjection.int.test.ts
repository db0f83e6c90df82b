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
