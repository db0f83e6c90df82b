import type { RecordedEvent } from '#shared/eventStore/eventStore';
import { mergeByPosition, replayState, replayTimeline } from './timeline';
import { historyEntries } from './historyEntries';
import { brainIdOfReadableId, brainJsonAt, brainShapeBReplay, hasReadableId } from './brainReplay';
import { uploadReplay } from './uploadReplay';
import { accountAt, accountTimeline, tokenIdsIn } from './accountReplay';
import { emptyWorld, evolveWorld } from './catalogueWorld';

const BASE = 'http://cat.example';
let seq = 0;
const revisions = new Map<string, bigint>();

/** A recorded event of a stream at the next global position. */
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

const UPLOAD = '11111111-1111-4111-8111-111111111111';
const LATER = '22222222-2222-4222-8222-222222222222';

function brainFields(over: Record<string, unknown> = {}) {
  return {
    name: 'Mouse P56',
    description: 'a mouse',
    atlasId: 3,
    speciesId: 2,
    categoryId: 1,
    isReference: false,
    extraLink: '',
    website: '',
    color: '',
    verified: false,
    ...over,
  };
}

function received(uploadId: string, associatedBrainId: number | null, filename = 'mouse.nii') {
  return recorded(`upload-${uploadId}`, 'UploadReceived', {
    uploadId,
    name: filename,
    filename,
    sizeBytes: 2 ** 20,
    sha256: 'ab',
    mimeType: 'application/octet-stream',
    blobKey: `uploads/${uploadId}.nii`,
    uploaderId: 7,
    associatedBrainId,
    receivedAt: '2026-01-01T00:00:00.000Z',
  });
}

/** A brain's life: its file received, created, processed, renamed, verified, a later upload, deleted. */
function brainLife() {
  const user = [
    recorded('user-7', 'UserRegistered', {
      userId: 7,
      email: 'ana@example.org',
      username: 'ana',
      firstName: 'Ana',
      lastName: 'Lopez',
      passwordHash: 'argon2$secret',
      isStaff: false,
      registeredAt: '2026-01-01T00:00:00.000Z',
    }),
  ];
  const taxonomy = [
    recorded('category-1', 'CategoryCreated', {
      categoryId: 1,
      name: 'rodents',
      description: '',
      imageKey: null,
      imageUrl: null,
      createdBy: 1,
      createdAt: 'x',
    }),
    recorded('species-2', 'SpeciesCreated', {
      speciesId: 2,
      name: 'mouse',
      scientificName: 'Mus musculus',
      description: '',
      categoryId: 1,
      createdBy: 1,
      createdAt: 'x',
    }),
    recorded('atlas-3', 'AtlasCreated', {
      atlasId: 3,
      name: 'Allen',
      slug: 'allen',
      description: 'ccf',
      speciesId: 2,
      isOfficial: false,
      verified: false,
      version: '',
      color: '',
      publicationUrl: '',
      createdBy: 1,
      createdAt: 'x',
    }),
  ];
  const upload = [received(UPLOAD, 42)];
  const brain = [
    recorded('brain-42', 'BrainCreated', {
      ...brainFields(),
      brainId: 42,
      readableId: 'mouse-p56-42',
      uuid: '33333333-3333-4333-8333-333333333333',
      uploaderId: 7,
      fileUploadId: UPLOAD,
      createdAt: '2026-01-01T00:00:01.000Z',
    }),
  ];
  upload.push(
    recorded(`upload-${UPLOAD}`, 'UploadProcessingStarted', {
      uploadId: UPLOAD,
      attempt: 1,
      processorId: 'p',
      leaseUntil: 'x',
      startedAt: '2026-01-01T00:00:02.000Z',
    }),
    recorded(`upload-${UPLOAD}`, 'UploadProcessingLeaseRenewed', {
      uploadId: UPLOAD,
      attempt: 1,
      processorId: 'p',
      leaseUntil: 'y',
      renewedAt: 'y',
    }),
    recorded(`upload-${UPLOAD}`, 'UploadProcessingCompleted', {
      uploadId: UPLOAD,
      attempt: 1,
      metadata: { format: 'nifti' },
      previewBlobKey: `previews/${UPLOAD}.png`,
      completedAt: '2026-01-01T00:00:03.000Z',
    }),
  );
  brain.push(
    recorded('brain-42', 'BrainUpdated', {
      brainId: 42,
      changes: { name: 'Mouse P57' },
      updatedBy: 7,
      updatedAt: 'x',
    }),
    recorded('brain-42', 'BrainUpdated', {
      brainId: 42,
      changes: { verified: true },
      updatedBy: 1,
      updatedAt: 'x',
    }),
  );
  const later = [received(LATER, 42, 'again.nii')];
  brain.push(
    recorded('brain-42', 'BrainDeleted', {
      brainId: 42,
      fileUploadIds: [UPLOAD],
      deletedBy: 7,
      deletedAt: 'x',
    }),
  );
  upload.push(
    recorded(`upload-${UPLOAD}`, 'UploadDeleted', {
      uploadId: UPLOAD,
      reason: 'brain_deleted',
      deletedBy: 7,
      deletedAt: 'x',
    }),
  );
  return { user, taxonomy, upload, brain, later };
}

describe('timeline', () => {
  test('merges streams in global order, each event once', () => {
    const { brain, upload, later } = brainLife();
    const merged = mergeByPosition([brain, upload, later, brain]);
    expect(merged).toHaveLength(brain.length + upload.length + later.length);
    const positions = merged.map((e) => e.position.commit);
    expect(positions).toEqual([...positions].sort((a, b) => (a < b ? -1 : 1)));
  });
});

describe('brain history by replay', () => {
  const { brain, upload, later } = brainLife();
  const events = mergeByPosition([brain, upload, later]);
  const steps = replayTimeline(events, brainShapeBReplay(42, BASE));
  const changesOf = (type: string, nth = 0) =>
    historyEntries(
      steps.filter((s) => s.event.type === type).map((s) => ({ event_id: s.event.id })),
      steps,
      () => ({}),
    )[nth]!.changes;

  test('the create lists every field of shape B with null before', () => {
    const changes = changesOf('BrainCreated');
    expect(changes.name).toEqual([null, 'Mouse P56']);
    expect(changes.id).toEqual([null, 42]);
    expect(changes.image).toEqual([null, `${BASE}/api/brains/42/file/`]);
    expect(changes.metadata).toEqual([null, {}]);
    expect(changes.preview_url).toEqual([null, null]);
    expect(Object.keys(changes).sort()).toEqual(
      [
        'id',
        'name',
        'date_uploaded',
        'image',
        'website',
        'verified',
        'category',
        'uploader',
        'atlas',
        'uuid',
        'zarr_file',
        'is_reference',
        'extra_link',
        'readable_id',
        's3_url',
        'preview_url',
        'metadata',
        'visibility',
        'embargo_until',
        'collaborators',
      ].sort(),
    );
    expect(changes.visibility).toEqual([null, 'public']);
    expect(changes.collaborators).toEqual([null, []]);
  });

  test("the file's processing changes the brain's metadata and preview", () => {
    expect(changesOf('UploadProcessingStarted')).toEqual({});
    expect(changesOf('UploadProcessingCompleted')).toEqual({
      preview_url: [null, `${BASE}/api/brains/42/preview/`],
      metadata: [{}, { format: 'nifti' }],
    });
  });

  test('a rename and a verification change exactly those fields', () => {
    expect(changesOf('BrainUpdated', 0)).toEqual({ name: ['Mouse P56', 'Mouse P57'] });
    expect(changesOf('BrainUpdated', 1)).toEqual({ verified: [false, true] });
  });

  test('a later upload of the brain changes nothing shape B shows; the delete changes nothing', () => {
    expect(changesOf('UploadReceived', 1)).toEqual({});
    expect(changesOf('BrainDeleted')).toEqual({});
    expect(changesOf('UploadDeleted')).toEqual({});
  });

  test('before the create and after the delete there is no brain', () => {
    expect(steps[0]!.before).toBeUndefined();
    expect(steps.at(-1)!.after).toBeUndefined();
  });

  test('a row the replay did not fold changed nothing', () => {
    expect(historyEntries([{ event_id: 'unknown' }], steps, (r) => ({ id: r.event_id }))).toEqual([
      { id: 'unknown', changes: {} },
    ]);
  });
});

describe('brain as of', () => {
  const { user, taxonomy, brain, upload } = brainLife();
  const upTo = (n: number) => mergeByPosition([user, taxonomy, brain.slice(0, n), upload.slice(0, 4)]);
  const view = { baseUrl: BASE, viewer: undefined, uploaderEmails: 'everyone' as const };

  test('shape A shows the atlas, species, category and uploader as of the point', () => {
    const world = upTo(2).reduce(evolveWorld, emptyWorld());
    expect(brainJsonAt(world, 42, 'a', view, Date.now())).toMatchObject({
      name: 'Mouse P57',
      atlas: { id: 3, name: 'Allen', slug: 'allen', description: 'ccf' },
      species: {
        id: 2,
        name: 'mouse',
        scientific_name: 'Mus musculus',
        category: { id: 1, name: 'rodents' },
      },
      uploader: { id: 7, username: 'ana', email: 'ana@example.org' },
      file_size_mb: 1,
      metadata: { format: 'nifti' },
    });
  });

  test('no brain after its delete, nor before its create', () => {
    expect(brainJsonAt(upTo(4).reduce(evolveWorld, emptyWorld()), 42, 'b', view, Date.now())).toBeUndefined();
    expect(brainJsonAt(upTo(0).reduce(evolveWorld, emptyWorld()), 42, 'b', view, Date.now())).toBeUndefined();
  });

  test('an embargo is judged at the time the answer is as of, not now', () => {
    const until = '2026-06-01T00:00:00.000Z';
    const world = upTo(2).reduce(evolveWorld, emptyWorld());
    const embargoed = [
      recorded('brain-42', 'BrainUpdated', {
        brainId: 42,
        changes: { visibility: 'embargoed', embargoUntil: until },
        updatedBy: 7,
        updatedAt: 'x',
      }),
    ].reduce(evolveWorld, world);
    const at = (iso: string) => brainJsonAt(embargoed, 42, 'b', view, Date.parse(iso));
    expect(at('2026-05-31T23:59:59.999Z')).toMatchObject({ visibility: 'embargoed', embargo_until: until });
    expect(at(until)).toMatchObject({ visibility: 'public', embargo_until: until });
  });

  test('the answer stands at the newest event folded', () => {
    const events = upTo(1);
    expect(replayState(events, brainShapeBReplay(42, BASE)).last).toBe(events.at(-1));
  });

  test('a readable_id names its brain by its id and its BrainCreated', () => {
    expect(brainIdOfReadableId('mouse-p56-42')).toBe(42);
    expect(brainIdOfReadableId('brain-2024-7')).toBe(7);
    expect(brainIdOfReadableId('mouse')).toBeUndefined();
    expect(brainIdOfReadableId('mouse-0')).toBeUndefined();
    expect(brainIdOfReadableId('mouse-99999999999')).toBeUndefined();
    expect(hasReadableId(brain, 'Mouse-P56-42')).toBe(true);
    expect(hasReadableId(brain, 'rat-42')).toBe(false);
  });
});

describe('upload history by replay', () => {
  const { user, brain, upload } = brainLife();
  const events = mergeByPosition([user, brain, upload]);
  const steps = replayTimeline(events, uploadReplay(UPLOAD, BASE)).filter(
    (s) => s.event.streamName === `upload-${UPLOAD}`,
  );
  const changes = historyEntries(
    steps.map((s) => ({ event_id: s.event.id })),
    steps,
    (r) => r,
  );

  test('received lists every field; the brain it belongs to is named as of then', () => {
    // The brain is created after its file is received: not there yet.
    expect(changes[0]!.changes.associated_brain).toEqual([null, { id: 42, name: null, readable_id: null }]);
    expect(changes[0]!.changes.uploader).toEqual([
      null,
      { id: 7, username: 'ana', email: 'ana@example.org' },
    ]);
    expect(changes[0]!.changes.s3_url).toEqual([null, `${BASE}/api/file-uploads/${UPLOAD}/download/`]);
  });

  test('processing: status and times, then metadata and preview', () => {
    expect(changes[1]!.changes).toEqual({
      status: ['uploaded', 'processing'],
      processing_started: [null, '2026-01-01T00:00:02.000Z'],
    });
    expect(changes[2]!.changes).toEqual({}); // the lease renewal
    expect(changes[3]!.changes).toEqual({
      status: ['processing', 'completed'],
      processing_completed: [null, '2026-01-01T00:00:03.000Z'],
      metadata: [{}, { format: 'nifti' }],
      preview_url: [null, `${BASE}/api/file-uploads/${UPLOAD}/preview/`],
    });
    expect(changes[4]!.changes).toEqual({});
  });
});

describe('account history by replay', () => {
  const TOKEN = '44444444-4444-4444-8444-444444444444';
  const { user } = brainLife();
  const events = [
    ...user,
    recorded('user-7', 'AccessTokenIssued', {
      userId: 7,
      tokenId: TOKEN,
      kind: 'personal',
      name: 'ci',
      tokenHash: 'deadbeef',
      createdAt: '2026-01-02T00:00:00.000Z',
      expiresAt: null,
    }),
    recorded('user-7', 'UserProfileUpdated', { userId: 7, bio: 'neurons', updatedAt: 'x' }),
    recorded('user-7', 'UserPasswordChanged', { userId: 7, passwordHash: 'argon2$other', changedAt: 'x' }),
    recorded('user-7', 'AccessTokenRevoked', {
      userId: 7,
      tokenId: TOKEN,
      reason: 'revoked',
      revokedAt: '2026-01-03T00:00:00.000Z',
    }),
  ];
  const steps = accountTimeline(events, BASE);
  const changes = historyEntries(
    steps.map((s) => ({ event_id: s.event.id })),
    steps,
    (r) => r,
  ).map((e) => e.changes);

  test('registration lists the account; a token event its token; a profile change its fields', () => {
    expect(changes[0]).toMatchObject({ username: [null, 'ana'], bio: [null, ''], avatar: [null, null] });
    expect(changes[1]).toEqual({
      id: [null, TOKEN],
      name: [null, 'ci'],
      created_at: [null, '2026-01-02T00:00:00.000Z'],
      last_used_at: [null, null],
      expires_at: [null, null],
      is_revoked: [null, false],
    });
    expect(changes[2]).toEqual({ bio: ['', 'neurons'] });
    expect(changes[3]).toEqual({});
    expect(changes[4]).toEqual({ is_revoked: [false, true] });
  });

  test('no hash ever appears', () => {
    expect(JSON.stringify(changes)).not.toMatch(/argon2|deadbeef|password/i);
  });

  test('as of: the account after the events; none before registration', () => {
    expect(accountAt(events.slice(0, 3), BASE)).toMatchObject({ bio: 'neurons', username: 'ana' });
    expect(accountAt([], BASE)).toBeUndefined();
    expect(tokenIdsIn(events)).toEqual([TOKEN]);
  });
});

describe('visibility and collaborators in a brain history', () => {
  const ENDED = '2026-01-01T00:00:05.000Z';
  const brain = [
    recorded('brain-43', 'BrainCreated', {
      ...brainFields(),
      visibility: 'private',
      embargoUntil: null,
      brainId: 43,
      readableId: 'mouse-43',
      uuid: '44444444-4444-4444-8444-444444444444',
      uploaderId: 7,
      fileUploadId: null,
      createdAt: '2026-01-01T00:00:01.000Z',
    }),
    recorded('brain-43', 'BrainCollaboratorAdded', {
      brainId: 43,
      userId: 9,
      role: 'viewer',
      addedBy: 7,
      addedAt: 'x',
    }),
    recorded('brain-43', 'BrainCollaboratorAdded', {
      brainId: 43,
      userId: 8,
      role: 'viewer',
      addedBy: 7,
      addedAt: 'x',
    }),
    recorded('brain-43', 'BrainCollaboratorRoleChanged', {
      brainId: 43,
      userId: 8,
      role: 'editor',
      previousRole: 'viewer',
      changedBy: 1,
      changedAt: 'y',
    }),
    recorded('brain-43', 'BrainUpdated', {
      brainId: 43,
      changes: { visibility: 'embargoed', embargoUntil: ENDED },
      updatedBy: 7,
      updatedAt: 'x',
    }),
    recorded('brain-43', 'EmbargoLifted', { brainId: 43, embargoUntil: ENDED, liftedAt: ENDED }),
    recorded('brain-43', 'BrainCollaboratorRemoved', {
      brainId: 43,
      userId: 9,
      removedBy: 7,
      removedAt: 'z',
    }),
  ];
  const steps = replayTimeline(brain, brainShapeBReplay(43, BASE));
  const changes = historyEntries(
    brain.map((e) => ({ event_id: e.id })),
    steps,
    () => ({}),
  ).map((entry) => entry.changes);

  test('each collaborator change is a change of `collaborators`, by user id, with the role', () => {
    expect(changes[0]!.collaborators).toEqual([null, []]);
    expect(changes[1]).toEqual({ collaborators: [[], [{ user: 9, role: 'viewer' }]] });
    expect(changes[2]).toEqual({
      collaborators: [
        [{ user: 9, role: 'viewer' }],
        [
          { user: 8, role: 'viewer' },
          { user: 9, role: 'viewer' },
        ],
      ],
    });
    expect(changes[3]).toEqual({
      collaborators: [
        [
          { user: 8, role: 'viewer' },
          { user: 9, role: 'viewer' },
        ],
        [
          { user: 8, role: 'editor' },
          { user: 9, role: 'viewer' },
        ],
      ],
    });
    expect(changes[6]).toEqual({
      collaborators: [
        [
          { user: 8, role: 'editor' },
          { user: 9, role: 'viewer' },
        ],
        [{ user: 8, role: 'editor' }],
      ],
    });
  });

  test('visibility as recorded: an embargo long ended is still the change to embargoed, then its lift', () => {
    expect(changes[0]!.visibility).toEqual([null, 'private']);
    expect(changes[4]).toEqual({ visibility: ['private', 'embargoed'], embargo_until: [null, ENDED] });
    expect(changes[5]).toEqual({ visibility: ['embargoed', 'public'] });
  });
});
