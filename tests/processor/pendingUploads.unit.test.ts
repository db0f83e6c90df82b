import { PendingUploads, knownStream } from '#services/processor/pendingUploads';
import { at, uploadEvents } from './support/uploadEvents';

const { event, received, restart } = uploadEvents(10);
const none = new Set<string>();
const ids = (uploads: readonly { uploadId: string }[]) => uploads.map((u) => u.uploadId);

test('the checkpoint stays before the oldest unfinished upload, and moves on once it finishes', () => {
  restart();
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
  restart();
  const pending = new PendingUploads(at(10));
  pending.observe([
    received('a'),
    received('b'),
    event('UploadProcessingStarted', { uploadId: 'a', leaseUntil: new Date(5000).toISOString() }),
  ]);
  expect(ids(pending.take(4999, none, 10))).toEqual(['b']);
  expect(ids(pending.take(5000, new Set(['b']), 10))).toEqual(['a']);
  expect(pending.nextDue(new Set(['b']))).toBe(5000);
  pending.observe([
    event('UploadProcessingLeaseRenewed', { uploadId: 'a', leaseUntil: new Date(9000).toISOString() }),
  ]);
  expect(pending.nextDue(new Set(['b']))).toBe(9000);
  pending.observe([event('UploadProcessingFailed', { uploadId: 'a' })]);
  expect(pending.has('a')).toBe(false);
});

test('uploaders take turns: one who queued many first gets one upload, then the next uploader one', () => {
  restart();
  const pending = new PendingUploads(at(10));
  pending.observe([
    received('a1', 1),
    received('a2', 1),
    received('a3', 1),
    received('b1', 2),
    received('c1', 3),
  ]);
  expect(ids(pending.take(0, none, 10))).toEqual(['a1', 'b1', 'c1', 'a2', 'a3']);
});

test('one slot at a time: the next turn goes to the uploader whose last turn is longest ago', () => {
  restart();
  const pending = new PendingUploads(at(10));
  pending.observe([
    received('a1', 1),
    received('a2', 1),
    received('a3', 1),
    received('b1', 2),
    received('b2', 2),
  ]);
  const running = new Set<string>();
  const order: string[] = [];
  for (let i = 0; i < 5; i++) {
    const [next] = pending.take(0, running, 1);
    order.push(next!.uploadId);
    pending.forget(next!.uploadId); // finished before the next turn
  }
  expect(order).toEqual(['a1', 'b1', 'a2', 'b2', 'a3']);
});

test('an uploader who comes in while another has a backlog goes next, not after the backlog', () => {
  restart();
  const pending = new PendingUploads(at(10));
  pending.observe([received('a1', 1), received('a2', 1), received('a3', 1)]);
  const running = new Set(ids(pending.take(0, none, 1)));
  expect([...running]).toEqual(['a1']);
  pending.observe([received('b1', 2)]);
  expect(ids(pending.take(0, running, 1))).toEqual(['b1']);
});

test('uploads held by a lease, running or not fitting are passed over; the earliest that fits comes due next', () => {
  restart();
  const pending = new PendingUploads(at(10));
  pending.observe([received('big', 1, 5000), received('a-small', 1, 10), received('b-small', 2, 10)]);
  pending.observe([
    event('UploadProcessingStarted', { uploadId: 'b-small', leaseUntil: new Date(9000).toISOString() }),
  ]);
  const small = (u: { sizeBytes: number }) => u.sizeBytes <= 100;
  expect(ids(pending.take(0, none, 5, small))).toEqual(['a-small']);
  expect(pending.nextDue(new Set(['a-small']), small)).toBe(9000);
  expect(ids(pending.take(9000, new Set(['a-small']), 5, small))).toEqual(['b-small']);
  expect([...pending.waiting(9000, none)].map((u) => u.uploadId)).toEqual(['big', 'a-small', 'b-small']);
});

test('a claim may decide on the UploadReceived alone while it is the last event of its stream seen', () => {
  restart();
  const pending = new PendingUploads(at(10));
  const withSidecar = event('UploadReceived', {
    uploadId: 's',
    blobKey: 'uploads/s',
    filename: 's.nii',
    sizeBytes: 1,
    uploaderId: 1,
    sidecar: { RepetitionTime: 2 },
  });
  pending.observe([received('a'), received('b'), withSidecar]);
  const [a, b, s] = pending.take(0, none, 10);
  expect(knownStream(a!)).toEqual({
    state: expect.objectContaining({ uploadId: 'a', status: 'uploaded', claim: null }),
    revision: 0n,
  });
  // A sidecar (up to 64 KiB) is not kept for a backlog of uploads: that claim reads its stream.
  expect(knownStream(s!)).toBeUndefined();
  // Once its stream moved on, the UploadReceived alone no longer tells its state.
  pending.observe([
    event('UploadProcessingStarted', { uploadId: 'b', leaseUntil: new Date(5000).toISOString() }),
  ]);
  expect(knownStream(b!)).toBeUndefined();
});
