import { ConflictError, NotFoundError } from '../../errors/httpErrors';
import { decideUpload } from './decide';
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
    expect(given(...events)).toEqual({ ...received, status: 'uploaded' });
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
