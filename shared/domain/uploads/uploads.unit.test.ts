import fc from 'fast-check';
import { ConflictError, NotFoundError } from '#shared/domain/domainErrors';
import { type UploadCommand, decideUpload } from './decide';
import { evolveUpload, initialUploadState, type UploadEvent, type UploadState } from './events';
import { TIFF_ONLY, UNSUPPORTED_FORMAT, fileNameProblem, uploadExtension } from './fileRules';

const received = {
  uploadId: '00000000-0000-4000-8000-000000000001',
  name: 'p56',
  filename: 'p56.nii.gz',
  sizeBytes: 400,
  sha256: 'ab'.repeat(32),
  mimeType: 'application/gzip',
  blobKey: 'uploads/x.nii.gz',
  uploaderId: 7,
  associatedBrainId: 42,
  receivedAt: '2026-01-01T00:00:00.000Z',
};
const actor = { userId: 7, isStaff: false };
const now = '2026-01-02T00:00:00.000Z';
const given = (...events: UploadEvent[]): UploadState => events.reduce(evolveUpload, initialUploadState());

describe('upload', () => {
  test('a received upload is in status uploaded', () => {
    const events = decideUpload({ type: 'ReceiveUpload', data: received }, initialUploadState());
    expect(given(...events)).toEqual({
      ...received,
      sidecar: null,
      status: 'uploaded',
      claim: null,
      completedAt: null,
      metadata: {},
      extractedMetadata: null,
      previewBlobKey: null,
      attachedAt: null,
    });
  });

  test('an upload id is received once', () => {
    const state = given({ type: 'UploadReceived', data: received });
    expect(() => decideUpload({ type: 'ReceiveUpload', data: received }, state)).toThrow(ConflictError);
  });

  test('deleting records who and why, and a second delete appends nothing', () => {
    const del = { type: 'DeleteUpload', data: { reason: 'brain_deleted', actor, now } } as const;
    const events = decideUpload(del, given({ type: 'UploadReceived', data: received }));
    expect(events).toEqual([
      {
        type: 'UploadDeleted',
        data: { uploadId: received.uploadId, reason: 'brain_deleted', deletedBy: 7, deletedAt: now },
      },
    ]);
    expect(decideUpload(del, given({ type: 'UploadReceived', data: received }, ...events))).toEqual([]);
    expect(() => decideUpload(del, initialUploadState())).toThrow(NotFoundError);
  });
});

const t0 = '2026-01-03T00:00:00.000Z';
const at = (seconds: number) => new Date(Date.parse(t0) + seconds * 1000).toISOString();
const claim = (processorId: string, nowS: number, leaseS = 60, maxAttempts = 3): UploadCommand => ({
  type: 'ClaimUpload',
  data: { processorId, now: at(nowS), leaseUntil: at(nowS + leaseS), maxAttempts },
});
const complete = (attempt: number, nowS = 1): UploadCommand => ({
  type: 'CompleteProcessing',
  data: {
    attempt,
    metadata: { format: 'nifti', shape: [2, 2, 2] },
    previewBlobKey: 'previews/x.png',
    now: at(nowS),
  },
});
const fail = (attempt: number, nowS = 1): UploadCommand => ({
  type: 'FailProcessing',
  data: { attempt, reason: 'not a NIfTI file: bad sizeof_hdr 0', now: at(nowS) },
});
const renew = (attempt: number, processorId: string, nowS: number): UploadCommand => ({
  type: 'RenewProcessingLease',
  data: { attempt, processorId, now: at(nowS), leaseUntil: at(nowS + 60) },
});

/** Runs commands in order, folding what each decides; a rejected command is rethrown. */
function run(...commands: UploadCommand[]): { state: UploadState; events: UploadEvent[] } {
  let state = given({ type: 'UploadReceived', data: received });
  const events: UploadEvent[] = [];
  for (const command of commands) {
    const decided = decideUpload(command, state);
    events.push(...decided);
    state = decided.reduce(evolveUpload, state);
  }
  return { state, events };
}

describe('processing', () => {
  test('a claim of an uploaded file is attempt 1, held until its lease runs out', () => {
    const { state, events } = run(claim('p1', 0));
    expect(events).toEqual([
      {
        type: 'UploadProcessingStarted',
        data: {
          uploadId: received.uploadId,
          attempt: 1,
          processorId: 'p1',
          leaseUntil: at(60),
          startedAt: at(0),
        },
      },
    ]);
    expect(state).toMatchObject({ status: 'processing', claim: { attempt: 1, processorId: 'p1' } });
  });

  test('a second claim conflicts while the lease runs, and is the next attempt once it expired', () => {
    expect(() => run(claim('p1', 0), claim('p2', 59))).toThrow(ConflictError);
    const { events, state } = run(claim('p1', 0), claim('p2', 60));
    expect(events[1]).toMatchObject({
      type: 'UploadProcessingStarted',
      data: { attempt: 2, processorId: 'p2' },
    });
    expect(state).toMatchObject({ status: 'processing', claim: { attempt: 2, processorId: 'p2' } });
  });

  test('a renewed lease keeps others out until its new deadline; only its holder renews', () => {
    expect(() => run(claim('p1', 0), renew(1, 'p1', 50), claim('p2', 100))).toThrow(ConflictError);
    expect(run(claim('p1', 0), renew(1, 'p1', 50), claim('p2', 110)).state).toMatchObject({
      claim: { attempt: 2 },
    });
    expect(() => run(claim('p1', 0), renew(1, 'p2', 50))).toThrow(ConflictError);
    expect(() => run(claim('p1', 0), claim('p2', 60), renew(1, 'p1', 61))).toThrow(ConflictError);
  });

  test('completion records metadata and preview; failure records the reason as metadata.error', () => {
    expect(run(claim('p1', 0), complete(1, 5)).state).toMatchObject({
      status: 'completed',
      completedAt: at(5),
      metadata: { format: 'nifti', shape: [2, 2, 2] },
      previewBlobKey: 'previews/x.png',
      claim: { attempt: 1, startedAt: at(0) },
    });
    expect(run(claim('p1', 0), fail(1, 5)).state).toMatchObject({
      status: 'failed',
      completedAt: at(5),
      metadata: { error: 'not a NIfTI file: bad sizeof_hdr 0' },
    });
  });

  test('only the current attempt finishes: a superseded processor cannot complete or fail', () => {
    expect(() => run(claim('p1', 0), claim('p2', 61), complete(1))).toThrow(ConflictError);
    expect(() => run(claim('p1', 0), claim('p2', 61), fail(1))).toThrow(ConflictError);
    expect(run(claim('p1', 0), claim('p2', 61), complete(2)).state.status).toBe('completed');
    expect(() => run(complete(1))).toThrow(ConflictError);
  });

  test('a finished upload is never claimed or finished again', () => {
    expect(() => run(claim('p1', 0), complete(1), claim('p2', 1000))).toThrow(ConflictError);
    expect(() => run(claim('p1', 0), fail(1), claim('p2', 1000))).toThrow(ConflictError);
    expect(() => run(claim('p1', 0), complete(1), fail(1))).toThrow(ConflictError);
    expect(() => run(claim('p1', 0), fail(1), complete(1))).toThrow(ConflictError);
  });

  test('taking back an expired claim that was the last allowed attempt fails the upload', () => {
    const { state, events } = run(claim('p1', 0, 60, 2), claim('p2', 60, 60, 2), claim('p3', 120, 60, 2));
    expect(events[2]).toMatchObject({ type: 'UploadProcessingFailed', data: { attempt: 2 } });
    expect(state.status).toBe('failed');
    expect(JSON.stringify(state)).toContain('stopped before finishing 2 times');
  });

  test('after UploadDeleted nothing: no claim, renewal or completion', () => {
    const deleted = { type: 'DeleteUpload', data: { reason: 'brain_deleted', actor, now } } as const;
    for (const command of [claim('p1', 0), renew(1, 'p1', 1), complete(1), fail(1)])
      expect(() => run(claim('p1', 0), deleted, command)).toThrow(NotFoundError);
    expect(given({ type: 'UploadDeleted', data: { ...deletedData } })).toEqual({ status: 'deleted' });
  });

  test('the status never goes backwards, whatever commands arrive in whatever order', () => {
    const rank = { none: 0, uploaded: 1, processing: 2, completed: 3, failed: 3, deleted: 4 } as const;
    const commandArb = fc.oneof(
      fc
        .record({ p: fc.constantFrom('p1', 'p2'), t: fc.integer({ min: 0, max: 300 }) })
        .map(({ p, t }) => claim(p, t)),
      fc
        .record({ a: fc.integer({ min: 1, max: 4 }), p: fc.constantFrom('p1', 'p2'), t: fc.nat(300) })
        .map(({ a, p, t }) => renew(a, p, t)),
      fc.integer({ min: 1, max: 4 }).map((a) => complete(a)),
      fc.integer({ min: 1, max: 4 }).map((a) => fail(a)),
    );
    fc.assert(
      fc.property(fc.array(commandArb, { maxLength: 30 }), (commands) => {
        let state = given({ type: 'UploadReceived', data: received });
        for (const command of commands) {
          let next = state;
          try {
            next = decideUpload(command, state).reduce(evolveUpload, state);
          } catch (error) {
            if (!(error instanceof ConflictError)) throw error;
          }
          expect(rank[next.status]).toBeGreaterThanOrEqual(rank[state.status]);
          if (state.status === 'completed' || state.status === 'failed') expect(next).toBe(state);
          state = next;
        }
      }),
    );
  });
});

const deletedData = {
  uploadId: received.uploadId,
  reason: 'brain_deleted',
  deletedBy: 7,
  deletedAt: now,
} as const;

describe('file rules', () => {
  test.each([
    ['a.nii', '.nii'],
    ['A.NII.GZ', '.nii.gz'],
    ['store.Zarr', '.zarr'],
    ['slice.tif', '.tif'],
    ['slice.TIFF', '.tiff'],
  ])('%s is supported as %s', (name, ext) => expect(uploadExtension(name)).toBe(ext));

  test.each(['a.gz', 'a.nii.zip', 'a.png', 'nii', ''])('%s is not supported', (name) => {
    expect(uploadExtension(name)).toBeUndefined();
    expect(fileNameProblem('file', name)).toBe(UNSUPPORTED_FORMAT);
  });

  test('the image field takes TIFF only', () => {
    expect(fileNameProblem('image', 'a.tif')).toBeUndefined();
    expect(fileNameProblem('image', 'a.nii')).toBe(TIFF_ONLY);
    expect(fileNameProblem('file', 'a.nii')).toBeUndefined();
  });
});
