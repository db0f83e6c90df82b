import type { GlobalPosition, RecordedEvent } from '../../shared/eventStore/eventStore';
import { PendingUploads } from '../../services/processor/pendingUploads';

const at = (n: number): GlobalPosition => ({ commit: BigInt(n), prepare: BigInt(n) });
let seq = 10;
const event = (type: string, data: Record<string, unknown>): RecordedEvent => {
  seq += 1;
  return {
    id: `e${seq}`,
    type,
    data,
    metadata: {
      actor: 'system',
      requestId: null,
      correlationId: 'c',
      causationId: null,
      schemaVersion: 1,
      recordedAt: '',
    },
    streamName: `upload-${String(data.uploadId)}`,
    streamRevision: 0n,
    position: at(seq),
  };
};
const received = (uploadId: string) =>
  event('UploadReceived', { uploadId, blobKey: `uploads/${uploadId}`, filename: 'a.nii', sizeBytes: 1 });

test('the checkpoint stays before the oldest unfinished upload, and moves on once it finishes', () => {
  seq = 10;
  const pending = new PendingUploads(at(10));
  pending.observe([received('a'), event('SomethingElse', {}), received('b')]); // 11, 12, 13
  expect(pending.checkpoint()).toEqual(at(10));
  pending.observe([event('UploadProcessingCompleted', { uploadId: 'a' })]); // 14
  expect(pending.checkpoint()).toEqual(at(12)); // just before b's UploadReceived
  pending.observe([event('UploadDeleted', { uploadId: 'b' }), event('SomethingElse', {})]); // 15, 16
  expect(pending.checkpoint()).toEqual(at(16));
  expect(pending.size).toBe(0);
});

test('an upload held by a lease is due once the lease ends; busy ones are skipped', () => {
  seq = 10;
  const pending = new PendingUploads(at(10));
  pending.observe([
    received('a'),
    received('b'),
    event('UploadProcessingStarted', { uploadId: 'a', leaseUntil: new Date(5000).toISOString() }),
  ]);
  expect(pending.due(4999, new Set(), 10).map((u) => u.uploadId)).toEqual(['b']);
  expect(pending.due(5000, new Set(['b']), 10).map((u) => u.uploadId)).toEqual(['a']);
  expect(pending.nextDue(new Set(['b']))).toBe(5000);
  pending.observe([
    event('UploadProcessingLeaseRenewed', { uploadId: 'a', leaseUntil: new Date(9000).toISOString() }),
  ]);
  expect(pending.nextDue(new Set(['b']))).toBe(9000);
  pending.observe([event('UploadProcessingFailed', { uploadId: 'a' })]);
  expect(pending.has('a')).toBe(false);
});
