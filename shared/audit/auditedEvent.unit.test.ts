import type { RecordedEvent } from '#shared/eventStore/eventStore';
import {
  actorIdOf,
  isInternalEvent,
  redactedData,
  referencesOfEvent,
  resourceOfEvent,
  type AuditResource,
} from './auditedEvent';

const TOKEN = '0b6a3c9e-1d2f-4a5b-8c7d-9e0f1a2b3c4d';
const UPLOAD = '7c1e2d3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f';
const NOW = '2026-03-04T05:06:07.000Z';

type Sample = Pick<RecordedEvent, 'type' | 'streamName' | 'data'>;

/** One event of every type the service appends, as its writer shapes it. */
const EVERY_EVENT: ReadonlyArray<readonly [Sample, AuditResource | null, boolean]> = [
  [
    {
      type: 'UserRegistered',
      streamName: 'user-7',
      data: {
        userId: 7,
        email: 'a@b.org',
        username: 'ann',
        firstName: 'A',
        lastName: 'B',
        passwordHash: 'scrypt$x',
        isStaff: false,
        registeredAt: NOW,
      },
    },
    { type: 'user', id: '7' },
    false,
  ],
  [
    { type: 'UserProfileUpdated', streamName: 'user-7', data: { userId: 7, bio: 'hi', updatedAt: NOW } },
    { type: 'user', id: '7' },
    false,
  ],
  [
    {
      type: 'UserPasswordChanged',
      streamName: 'user-7',
      data: { userId: 7, passwordHash: 'scrypt$y', changedAt: NOW },
    },
    { type: 'user', id: '7' },
    false,
  ],
  [
    {
      type: 'UserStaffStatusChanged',
      streamName: 'user-7',
      data: { userId: 7, isStaff: true, changedAt: NOW },
    },
    { type: 'user', id: '7' },
    false,
  ],
  [
    {
      type: 'AccessTokenIssued',
      streamName: 'user-7',
      data: {
        userId: 7,
        tokenId: TOKEN,
        kind: 'personal',
        name: 'ci',
        tokenHash: 'sha256$z',
        createdAt: NOW,
        expiresAt: null,
      },
    },
    { type: 'token', id: TOKEN },
    false,
  ],
  [
    { type: 'AccessTokenRevoked', streamName: 'user-7', data: { userId: 7, tokenId: TOKEN, revokedAt: NOW } },
    { type: 'token', id: TOKEN },
    false,
  ],
  [
    {
      type: 'AccessTokenUsed',
      streamName: `accessTokenUsage-${TOKEN}`,
      data: { tokenId: TOKEN, userId: 7, usedAt: NOW },
    },
    { type: 'token', id: TOKEN },
    true,
  ],
  [
    {
      type: 'CategoryCreated',
      streamName: 'category-2',
      data: { categoryId: 2, name: 'mammals', createdBy: 1, createdAt: NOW },
    },
    { type: 'category', id: '2' },
    false,
  ],
  [
    {
      type: 'SpeciesCreated',
      streamName: 'species-3',
      data: { speciesId: 3, scientificName: 'Mus musculus', categoryId: 2, createdBy: 1 },
    },
    { type: 'species', id: '3' },
    false,
  ],
  [
    {
      type: 'AtlasCreated',
      streamName: 'atlas-4',
      data: { atlasId: 4, slug: 'allen', speciesId: 3, createdBy: 7, createdAt: NOW },
    },
    { type: 'atlas', id: '4' },
    false,
  ],
  [
    {
      type: 'BrainCreated',
      streamName: 'brain-5',
      data: {
        brainId: 5,
        readableId: 'MM-5',
        name: 'Mouse',
        categoryId: 2,
        speciesId: 3,
        atlasId: 4,
        uploaderId: 7,
        fileUploadId: UPLOAD,
        createdAt: NOW,
      },
    },
    { type: 'brain', id: '5' },
    false,
  ],
  [
    {
      type: 'BrainUpdated',
      streamName: 'brain-5',
      data: { brainId: 5, changes: { speciesId: 9, name: 'Rat' }, updatedAt: NOW },
    },
    { type: 'brain', id: '5' },
    false,
  ],
  [
    { type: 'BrainDeleted', streamName: 'brain-5', data: { brainId: 5, deletedBy: 7, deletedAt: NOW } },
    { type: 'brain', id: '5' },
    false,
  ],
  [
    {
      type: 'BrainCollaboratorAdded',
      streamName: 'brain-5',
      data: { brainId: 5, userId: 8, role: 'viewer', addedBy: 7, addedAt: NOW },
    },
    { type: 'brain', id: '5' },
    false,
  ],
  [
    {
      type: 'BrainCollaboratorRoleChanged',
      streamName: 'brain-5',
      data: { brainId: 5, userId: 8, role: 'editor', previousRole: 'viewer', changedBy: 7, changedAt: NOW },
    },
    { type: 'brain', id: '5' },
    false,
  ],
  [
    {
      type: 'BrainCollaboratorRemoved',
      streamName: 'brain-5',
      data: { brainId: 5, userId: 8, removedBy: 7, removedAt: NOW },
    },
    { type: 'brain', id: '5' },
    false,
  ],
  [
    {
      type: 'EmbargoLifted',
      streamName: 'brain-5',
      data: { brainId: 5, embargoUntil: NOW, liftedAt: NOW },
    },
    { type: 'brain', id: '5' },
    false,
  ],
  [
    {
      type: 'UploadReceived',
      streamName: `upload-${UPLOAD}`,
      data: {
        uploadId: UPLOAD,
        name: 'scan',
        filename: 's.nii',
        sizeBytes: 9,
        sha256: 'ab',
        mimeType: 'application/octet-stream',
        blobKey: 'k',
        uploaderId: 7,
        associatedBrainId: 5,
        receivedAt: NOW,
      },
    },
    { type: 'file_upload', id: UPLOAD },
    false,
  ],
  [
    {
      type: 'UploadAttachedToBrain',
      streamName: `upload-${UPLOAD}`,
      data: {
        uploadId: UPLOAD,
        associatedBrainId: 6,
        sidecar: { EchoTime: 0.03 },
        attachedBy: 7,
        attachedAt: NOW,
      },
    },
    { type: 'file_upload', id: UPLOAD },
    false,
  ],
  [
    {
      type: 'UploadProcessingStarted',
      streamName: `upload-${UPLOAD}`,
      data: { uploadId: UPLOAD, attempt: 1, processorId: 'p', leaseUntil: NOW, startedAt: NOW },
    },
    { type: 'file_upload', id: UPLOAD },
    false,
  ],
  [
    {
      type: 'UploadProcessingLeaseRenewed',
      streamName: `upload-${UPLOAD}`,
      data: { uploadId: UPLOAD, attempt: 1, processorId: 'p', leaseUntil: NOW },
    },
    { type: 'file_upload', id: UPLOAD },
    true,
  ],
  [
    {
      type: 'UploadProcessingCompleted',
      streamName: `upload-${UPLOAD}`,
      data: { uploadId: UPLOAD, attempt: 1, completedAt: NOW },
    },
    { type: 'file_upload', id: UPLOAD },
    false,
  ],
  [
    {
      type: 'UploadProcessingFailed',
      streamName: `upload-${UPLOAD}`,
      data: { uploadId: UPLOAD, attempt: 1, error: 'bad', failedAt: NOW },
    },
    { type: 'file_upload', id: UPLOAD },
    false,
  ],
  [
    {
      type: 'UploadDeleted',
      streamName: `upload-${UPLOAD}`,
      data: { uploadId: UPLOAD, reason: 'owner_request', deletedBy: 7, deletedAt: NOW },
    },
    { type: 'file_upload', id: UPLOAD },
    false,
  ],
  [
    {
      type: 'ValueReserved',
      streamName: 'reservation_email-0123abcd',
      data: { scope: 'email', value: 'a@b.org', ownerId: 'user-7', reservedAt: NOW },
    },
    { type: 'user', id: '7' },
    true,
  ],
  [
    {
      type: 'ReservationReleased',
      streamName: 'reservation_category_name-99aa',
      data: { scope: 'category_name', ownerId: 'category-2', releasedAt: NOW },
    },
    { type: 'category', id: '2' },
    true,
  ],
  [
    {
      type: 'StreamFenced',
      streamName: 'brain-6',
      data: { reason: 'reservation_taken_over', scope: 'readable_id', takenOverBy: 'brain-8', fencedAt: NOW },
    },
    { type: 'brain', id: '6' },
    true,
  ],
  [
    { type: 'IdAllocated', streamName: 'sequence-brain', data: { sequence: 'brain', id: 5 } },
    { type: 'brain', id: '5' },
    true,
  ],
  [
    { type: 'IdAllocated', streamName: 'sequence-user', data: { sequence: 'user', id: 7 } },
    { type: 'user', id: '7' },
    true,
  ],
  [{ type: 'IdAllocated', streamName: 'sequence-unknown', data: { sequence: 'unknown', id: 1 } }, null, true],
  [
    {
      type: 'ValueReserved',
      streamName: 'reservation_x-1',
      data: { scope: 'x', value: 'v', ownerId: 'somewhere', reservedAt: NOW },
    },
    null,
    true,
  ],
];

describe('resourceOfEvent and isInternalEvent', () => {
  test.each(
    EVERY_EVENT.map(
      ([event, resource, internal]) => [event.type, event.streamName, event, resource, internal] as const,
    ),
  )('%s in %s', (_type, _stream, event, resource, internal) => {
    expect(resourceOfEvent(event)).toEqual(resource);
    expect(isInternalEvent(event.type)).toBe(internal);
  });

  test('token events belong to the token, not to the user whose stream holds them', () => {
    const issued = EVERY_EVENT.find(([e]) => e.type === 'AccessTokenIssued')![0];
    expect(issued.streamName).toBe('user-7');
    expect(resourceOfEvent(issued)).toEqual({ type: 'token', id: TOKEN });
  });
});

describe('referencesOfEvent', () => {
  const of = (type: string, stream?: string) => {
    const found = EVERY_EVENT.find(
      ([e]) => e.type === type && (stream === undefined || e.streamName === stream),
    );
    return referencesOfEvent(found![0]);
  };

  test('a brain names the category, species and atlas it is placed in; never itself, its uploader or its upload', () => {
    expect(of('BrainCreated')).toEqual(['atlas:4', 'category:2', 'species:3']);
  });

  test('a change names what it is placed in now (inside `changes`)', () => {
    expect(of('BrainUpdated')).toEqual(['species:9']);
  });

  test('an upload names the brain it is attached to; atlases and species name what they sit in', () => {
    expect(of('UploadReceived')).toEqual(['brain:5']);
    expect(of('UploadAttachedToBrain')).toEqual(['brain:6']);
    expect(of('AtlasCreated')).toEqual(['species:3']);
    expect(of('SpeciesCreated')).toEqual(['category:2']);
  });

  test('people are found by actor, not by reference: user and token events name nothing', () => {
    expect(of('UserRegistered')).toEqual([]);
    expect(of('AccessTokenIssued')).toEqual([]);
    expect(of('BrainDeleted')).toEqual([]);
    expect(of('EmbargoLifted')).toEqual([]);
  });

  test('a collaborator event names the user it gives or takes access (not the one acting)', () => {
    expect(of('BrainCollaboratorAdded')).toEqual(['user:8']);
    expect(of('BrainCollaboratorRoleChanged')).toEqual(['user:8']);
    expect(of('BrainCollaboratorRemoved')).toEqual(['user:8']);
  });
});

describe('redactedData', () => {
  test.each(EVERY_EVENT.map(([event]) => [event.type, event] as const))(
    '%s keeps no password or token hash',
    (_type, event) => {
      const text = JSON.stringify(redactedData(event.type, event.data));
      expect(text).not.toMatch(/passwordHash|tokenHash|scrypt\$|sha256\$/);
    },
  );

  test('keeps everything else', () => {
    const registered = EVERY_EVENT[0]![0];
    const { passwordHash: _hidden, ...rest } = registered.data as Record<string, unknown>;
    expect(redactedData(registered.type, registered.data)).toEqual(rest);
  });

  test('drops secrets however they are named, and the e-mail a reservation holds', () => {
    expect(
      redactedData('X', { secret: 's', token: 't', tokenHash: 'h', passwordHash: 'p', kept: 1 }),
    ).toEqual({ kept: 1 });
    expect(redactedData('ValueReserved', { scope: 'email', value: 'a@b.org', ownerId: 'user-7' })).toEqual({
      scope: 'email',
      ownerId: 'user-7',
    });
    expect(redactedData('ValueReserved', { scope: 'username', value: 'ann', ownerId: 'user-7' })).toEqual({
      scope: 'username',
      value: 'ann',
      ownerId: 'user-7',
    });
  });

  test('a payload that is not an object reads as empty', () => {
    expect(redactedData('X', null)).toEqual({});
    expect(redactedData('X', 'text')).toEqual({});
  });
});

describe('actorIdOf', () => {
  test('a user id as text is the user; system (or anything else) is null', () => {
    expect(actorIdOf('7')).toBe(7);
    expect(actorIdOf('system')).toBeNull();
    expect(actorIdOf('7; drop')).toBeNull();
    expect(actorIdOf('')).toBeNull();
  });
});
