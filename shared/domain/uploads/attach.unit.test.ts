import { ConflictError, InvalidFieldError } from '#shared/domain/domainErrors';
import { type AttachUploadToBrain, UPLOAD_NOT_FOUND, UPLOAD_TAKEN, decideUpload } from './decide';
import {
  type LiveUpload,
  type UploadEvent,
  type UploadState,
  evolveUpload,
  initialUploadState,
} from './events';
import { MAX_SIDECAR_BYTES, metadataWithSidecar, parseSidecar } from './sidecar';

const UPLOAD = '00000000-0000-4000-8000-000000000002';
const received = (sidecar?: Record<string, unknown>): UploadEvent => ({
  type: 'UploadReceived',
  data: {
    uploadId: UPLOAD,
    name: 'sub-01_T1w',
    filename: 'sub-01_T1w.nii.gz',
    sizeBytes: 400,
    sha256: 'ab'.repeat(32),
    mimeType: 'application/gzip',
    blobKey: 'uploads/x.nii.gz',
    uploaderId: 7,
    associatedBrainId: null,
    receivedAt: '2026-01-01T00:00:00.000Z',
    ...(sidecar ? { sidecar } : {}),
  },
});
const started: UploadEvent = {
  type: 'UploadProcessingStarted',
  data: {
    uploadId: UPLOAD,
    attempt: 1,
    processorId: 'p',
    leaseUntil: '2026-01-01T00:10:00.000Z',
    startedAt: '2026-01-01T00:00:01.000Z',
  },
};
const EXTRACTED = { format: 'nifti1', shape: [2, 2, 2], RepetitionTime: 2 };
const completed: UploadEvent = {
  type: 'UploadProcessingCompleted',
  data: {
    uploadId: UPLOAD,
    attempt: 1,
    metadata: EXTRACTED,
    previewBlobKey: null,
    completedAt: '2026-01-01T00:00:02.000Z',
  },
};
const failed: UploadEvent = {
  type: 'UploadProcessingFailed',
  data: {
    uploadId: UPLOAD,
    attempt: 1,
    reason: 'not a NIfTI file: bad sizeof_hdr',
    completedAt: '2026-01-01T00:00:02.000Z',
  },
};
const now = '2026-01-02T00:00:00.000Z';
const given = (...events: UploadEvent[]): UploadState => events.reduce(evolveUpload, initialUploadState());
const attach = (
  brainId: number,
  userId = 7,
  sidecar: Record<string, unknown> | null = null,
): AttachUploadToBrain => ({
  type: 'AttachUploadToBrain',
  data: { brainId, sidecar, actor: { userId, isStaff: false }, now },
});
const refusal = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidFieldError);
    return (error as InvalidFieldError).fields;
  }
  throw new Error('not refused');
};

describe('attaching an upload to a brain', () => {
  test.each([
    ['uploaded', [received()]],
    ['processing', [received(), started]],
    ['completed', [received(), started, completed]],
  ])('an own upload %s is attached, and then names the brain', (_status, events) => {
    const out = decideUpload(attach(42), given(...events));
    expect(out).toEqual([
      {
        type: 'UploadAttachedToBrain',
        data: { uploadId: UPLOAD, associatedBrainId: 42, sidecar: null, attachedBy: 7, attachedAt: now },
      },
    ]);
    expect((given(...events, ...out) as LiveUpload).associatedBrainId).toBe(42);
  });

  test('unknown, deleted or someone else\u2019s (staff too): the same 400 on upload', () => {
    const deleted: UploadEvent = {
      type: 'UploadDeleted',
      data: { uploadId: UPLOAD, reason: 'owner_request', deletedBy: 7, deletedAt: now },
    };
    for (const state of [initialUploadState(), given(received(), deleted)])
      expect(refusal(() => decideUpload(attach(42), state))).toEqual({ upload: [UPLOAD_NOT_FOUND] });
    const staff: AttachUploadToBrain = {
      ...attach(42, 1),
      data: { ...attach(42, 1).data, actor: { userId: 1, isStaff: true } },
    };
    expect(refusal(() => decideUpload(staff, given(received())))).toEqual({ upload: [UPLOAD_NOT_FOUND] });
  });

  test('taken by another brain, or failed: 400 on upload; the same brain again is no change', () => {
    const taken = given(received(), ...decideUpload(attach(42), given(received())));
    expect(refusal(() => decideUpload(attach(43), taken))).toEqual({ upload: [UPLOAD_TAKEN] });
    expect(decideUpload(attach(42), taken)).toEqual([]);
    const formUpload = given({
      ...received(),
      data: { ...received().data, associatedBrainId: 5 },
    } as UploadEvent);
    expect(refusal(() => decideUpload(attach(43), formUpload))).toEqual({ upload: [UPLOAD_TAKEN] });
    expect(refusal(() => decideUpload(attach(42), given(received(), started, failed)))).toEqual({
      upload: ['This file upload failed processing: not a NIfTI file: bad sizeof_hdr'],
    });
  });
});

const errorOf = (value: unknown): string | undefined => {
  const parsed = parseSidecar(value);
  return 'error' in parsed ? parsed.error : undefined;
};

test('an upload whose brain the handler fenced (never to be created) is free again; another is not', () => {
  const orphan = given(received(), ...decideUpload(attach(42), given(received())));
  const retry = (abandonedBrainId: number): AttachUploadToBrain => ({
    ...attach(43),
    data: { ...attach(43).data, abandonedBrainId },
  });
  const out = decideUpload(retry(42), orphan);
  expect(out).toHaveLength(1);
  expect(
    (given(received(), ...decideUpload(attach(42), given(received())), ...out) as LiveUpload)
      .associatedBrainId,
  ).toBe(43);
  expect(refusal(() => decideUpload(retry(41), orphan))).toEqual({ upload: [UPLOAD_TAKEN] });
});

test("its owner cannot delete an upload once it is a brain's file (409); the brain's delete can", () => {
  const attachedState = given(received(), ...decideUpload(attach(42), given(received())));
  const del = (reason: 'owner_request' | 'brain_deleted') =>
    decideUpload(
      { type: 'DeleteUpload', data: { reason, actor: { userId: 7, isStaff: false }, now } },
      attachedState,
    );
  expect(() => del('owner_request')).toThrow(ConflictError);
  expect(del('brain_deleted')).toHaveLength(1);
});

describe('the sidecar in the metadata', () => {
  const sidecar = { RepetitionTime: 9, EchoTime: 0.03, Manufacturer: { name: 'Siemens' } };
  const merged = {
    EchoTime: 0.03,
    Manufacturer: { name: 'Siemens' },
    ...EXTRACTED,
    sidecar_keys: ['EchoTime', 'Manufacturer', 'RepetitionTime'],
  };

  test('given with the file: merged when processing completes, the extracted values winning', () => {
    const state = given(received(sidecar), started);
    expect((state as LiveUpload).metadata).toEqual({});
    expect((given(received(sidecar), started, completed) as LiveUpload).metadata).toEqual(merged);
  });

  test('given at attach to a completed upload: merged at once; to one still processing: at completion', () => {
    const atAttach = decideUpload(attach(42, 7, sidecar), given(received(), started, completed));
    expect((given(received(), started, completed, ...atAttach) as LiveUpload).metadata).toEqual(merged);
    const early = decideUpload(attach(42, 7, sidecar), given(received(), started));
    expect((given(received(), started, ...early, completed) as LiveUpload).metadata).toEqual(merged);
  });

  test('a sidecar at attach is merged over the one given with the file', () => {
    const attached = decideUpload(
      attach(42, 7, { EchoTime: 0.05 }),
      given(received({ EchoTime: 0.03, Flip: 9 })),
    );
    const state = given(received({ EchoTime: 0.03, Flip: 9 }), ...attached, started, completed) as LiveUpload;
    expect(state.metadata).toEqual({
      EchoTime: 0.05,
      Flip: 9,
      ...EXTRACTED,
      sidecar_keys: ['EchoTime', 'Flip'],
    });
  });

  test('without a sidecar the metadata is what processing read', () => {
    expect(metadataWithSidecar(EXTRACTED, null)).toBe(EXTRACTED);
    expect(metadataWithSidecar(EXTRACTED, {})).toBe(EXTRACTED);
    expect((given(received(), started, completed) as LiveUpload).metadata).toEqual(EXTRACTED);
  });

  test('parsing: an object (as text or as a value), at most 64 KiB as JSON', () => {
    expect(parseSidecar('{"EchoTime": 0.03}')).toEqual({ sidecar: { EchoTime: 0.03 } });
    expect(parseSidecar({ EchoTime: 0.03 })).toEqual({ sidecar: { EchoTime: 0.03 } });
    expect(errorOf('{not json')).toMatch(/not valid JSON/);
    for (const value of ['[1, 2]', '3', '"text"', 'null', [1], 3])
      expect(errorOf(value)).toMatch(/not an array or a single value/);
    const big = { Notes: 'x'.repeat(MAX_SIDECAR_BYTES) };
    expect(errorOf(JSON.stringify(big))).toMatch(/at most 65536/);
    const fits = { N: 'x'.repeat(MAX_SIDECAR_BYTES - '{"N":""}'.length) };
    expect(parseSidecar(JSON.stringify(fits, null, 2))).toEqual({ sidecar: fits });
  });
});
