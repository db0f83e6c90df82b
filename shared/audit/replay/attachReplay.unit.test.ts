import type { RecordedEvent } from '#shared/eventStore/eventStore';
import { type Replay, mergeByPosition, replayTimeline } from './timeline';
import type { CatalogueWorld } from './catalogueWorld';
import { historyEntries } from './historyEntries';
import { brainShapeBReplay } from './brainReplay';
import { associatedBrainIn, uploadReplay } from './uploadReplay';

/** An upload made on its own, processed, then attached to a new brain with a sidecar: both histories. */
const BASE = 'http://cat.example';
const UPLOAD = '44444444-4444-4444-8444-444444444444';
let seq = 0;
const revisions = new Map<string, bigint>();

function recorded(streamName: string, type: string, data: Record<string, unknown>): RecordedEvent {
  seq += 1;
  const revision = revisions.get(streamName) ?? 0n;
  revisions.set(streamName, revision + 1n);
  return {
    id: `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}`,
    type,
    data,
    metadata: {
      actor: '7',
      requestId: `req-${seq}`,
      correlationId: 'c',
      causationId: null,
      schemaVersion: 1,
      recordedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
    },
    streamName,
    streamRevision: revision,
    position: { commit: BigInt(seq * 10), prepare: BigInt(seq) },
  };
}

const stream = `upload-${UPLOAD}`;
const EXTRACTED = { format: 'nifti1', shape: [2, 2, 2] };
const upload = [
  recorded(stream, 'UploadReceived', {
    uploadId: UPLOAD,
    name: 'sub-01_T1w.nii',
    filename: 'sub-01_T1w.nii',
    sizeBytes: 1024,
    sha256: 'ab',
    mimeType: 'application/octet-stream',
    blobKey: `uploads/${UPLOAD}.nii`,
    uploaderId: 7,
    associatedBrainId: null,
    receivedAt: '2026-01-01T00:00:00.000Z',
  }),
  recorded(stream, 'UploadProcessingStarted', {
    uploadId: UPLOAD,
    attempt: 1,
    processorId: 'p',
    leaseUntil: 'x',
    startedAt: '2026-01-01T00:00:02.000Z',
  }),
  recorded(stream, 'UploadProcessingCompleted', {
    uploadId: UPLOAD,
    attempt: 1,
    metadata: EXTRACTED,
    previewBlobKey: null,
    completedAt: '2026-01-01T00:00:03.000Z',
  }),
  recorded(stream, 'UploadAttachedToBrain', {
    uploadId: UPLOAD,
    associatedBrainId: 9,
    sidecar: { EchoTime: 0.03 },
    attachedBy: 7,
    attachedAt: '2026-01-01T00:01:00.000Z',
  }),
];
const brain = [
  recorded('brain-9', 'BrainCreated', {
    name: 'sub-01',
    description: '',
    atlasId: null,
    speciesId: null,
    categoryId: 1,
    isReference: false,
    extraLink: '',
    website: '',
    color: '',
    verified: false,
    brainId: 9,
    readableId: 'sub-01-9',
    uuid: '55555555-5555-4555-8555-555555555555',
    uploaderId: 7,
    fileUploadId: UPLOAD,
    createdAt: '2026-01-01T00:01:00.000Z',
  }),
];
const events = mergeByPosition([upload, brain]);
const MERGED = { EchoTime: 0.03, ...EXTRACTED, sidecar_keys: ['EchoTime'] };

function history(replay: Replay<CatalogueWorld>) {
  const steps = replayTimeline(events, replay);
  return historyEntries(
    steps.map((s) => ({ event_id: s.event.id })),
    steps,
    (r) => r,
  ).map((entry, i) => ({ type: steps[i]!.event.type, changes: entry.changes }));
}

test("the upload's history: the attach names the brain and merges the sidecar into the metadata", () => {
  const entries = history(uploadReplay(UPLOAD, BASE));
  const attach = entries.find((e) => e.type === 'UploadAttachedToBrain')!;
  expect(attach.changes).toEqual({
    associated_brain: [null, { id: 9, name: null, readable_id: null }],
    metadata: [EXTRACTED, MERGED],
  });
  const created = entries.find((e) => e.type === 'BrainCreated')!;
  expect(created.changes.associated_brain).toEqual([
    { id: 9, name: null, readable_id: null },
    { id: 9, name: 'sub-01', readable_id: 'sub-01-9' },
  ]);
});

test("the brain's history: created with the upload's file and merged metadata", () => {
  const entries = history(brainShapeBReplay(9, BASE));
  const created = entries.find((e) => e.type === 'BrainCreated')!;
  expect(created.changes.metadata).toEqual([null, MERGED]);
  expect(created.changes.image).toEqual([null, `${BASE}/api/brains/9/file/`]);
});

test('the brain an upload stream names: the one it was attached to, else the one it was received for', () => {
  expect(associatedBrainIn(upload)).toBe(9);
  expect(associatedBrainIn(upload.slice(0, 3))).toBeNull();
  expect(associatedBrainIn([])).toBeNull();
});
