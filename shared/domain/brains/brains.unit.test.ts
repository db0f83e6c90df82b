import { NotFoundError, ForbiddenError, InvalidFieldError } from '#shared/domain/domainErrors';
import {
  ATLAS_OR_CATEGORY,
  CATEGORY_CONTRADICTS_ATLAS,
  decideBrain,
  type BrainCommand,
  type CreateBrain,
  type UpdateBrain,
} from './decide';
import { evolveBrain, initialBrainState, type BrainEvent, type BrainState } from './events';

const owner = { userId: 7, isStaff: false };
const stranger = { userId: 8, isStaff: false };
const curator = { userId: 1, isStaff: true };
const now = '2026-01-01T00:00:00.000Z';
const allen = { atlasId: 5, speciesId: 4, categoryId: 3 };

const create = (overrides: Partial<CreateBrain['data']> = {}): CreateBrain => ({
  type: 'CreateBrain',
  data: {
    brainId: 42,
    readableId: 'p56-42',
    uuid: '00000000-0000-4000-8000-000000000042',
    name: 'P56',
    description: '',
    atlas: { found: allen },
    category: undefined,
    isReference: true,
    extraLink: '',
    website: '',
    color: '#112233',
    verified: false,
    fileUploadId: 'upload-1',
    actor: owner,
    now,
    ...overrides,
  },
});

const given = (...events: BrainEvent[]): BrainState => events.reduce(evolveBrain, initialBrainState());
const created = (): BrainState => given(...decideBrain(create(), initialBrainState()));
const update = (data: Omit<UpdateBrain['data'], 'now'>): BrainCommand => ({
  type: 'UpdateBrain',
  data: { ...data, now },
});

function fieldsOf(decide: () => unknown): Record<string, string[]> {
  try {
    decide();
  } catch (error) {
    if (error instanceof InvalidFieldError) return error.fields;
    throw error;
  }
  throw new Error('expected a validation error');
}

describe('create', () => {
  test('species and category come from the atlas', () => {
    const [event] = decideBrain(create(), initialBrainState());
    expect(event).toMatchObject({
      type: 'BrainCreated',
      data: { brainId: 42, atlasId: 5, speciesId: 4, categoryId: 3, uploaderId: 7, fileUploadId: 'upload-1' },
    });
  });

  test('a category alone files the brain without an atlas', () => {
    const [event] = decideBrain(create({ atlas: undefined, category: { found: 3 } }), initialBrainState());
    expect(event!.data).toMatchObject({ atlasId: null, speciesId: null, categoryId: 3 });
  });

  test('a category that contradicts the atlas is a 400 on category', () => {
    expect(fieldsOf(() => decideBrain(create({ category: { found: 9 } }), initialBrainState()))).toEqual({
      category: [CATEGORY_CONTRADICTS_ATLAS],
    });
  });

  test('neither atlas nor category is a non-field error; missing references are per field', () => {
    expect(fieldsOf(() => decideBrain(create({ atlas: undefined }), initialBrainState()))).toEqual({
      non_field_errors: [ATLAS_OR_CATEGORY],
    });
    expect(
      Object.keys(
        fieldsOf(() =>
          decideBrain(create({ atlas: { missing: '77' }, category: { missing: 'x' } }), initialBrainState()),
        ),
      ).sort(),
    ).toEqual(['atlas', 'category']);
  });

  test('only staff create a verified brain', () => {
    expect(() => decideBrain(create({ verified: true }), initialBrainState())).toThrow(ForbiddenError);
    expect(decideBrain(create({ verified: true, actor: curator }), initialBrainState())).toHaveLength(1);
  });
});

describe('update', () => {
  test('only the fields that change are recorded', () => {
    const events = decideBrain(update({ name: 'P56', description: 'new', actor: owner }), created());
    expect(events).toEqual([
      {
        type: 'BrainUpdated',
        data: { brainId: 42, changes: { description: 'new' }, updatedBy: 7, updatedAt: now },
      },
    ]);
    expect(decideBrain(update({ name: 'P56', actor: owner }), created())).toEqual([]);
  });

  test('a new atlas moves species and category with it', () => {
    const [event] = decideBrain(
      update({ atlas: { found: { atlasId: 6, speciesId: 10, categoryId: 11 } }, actor: owner }),
      created(),
    );
    expect(event!.data).toMatchObject({ changes: { atlasId: 6, speciesId: 10, categoryId: 11 } });
  });

  test('a new category must agree with the atlas the brain keeps', () => {
    expect(fieldsOf(() => decideBrain(update({ category: { found: 9 }, actor: owner }), created()))).toEqual({
      category: [CATEGORY_CONTRADICTS_ATLAS],
    });
  });

  test('atlas null files the brain under its category alone', () => {
    const [event] = decideBrain(update({ atlas: null, actor: owner }), created());
    expect(event!.data).toMatchObject({ changes: { atlasId: null, speciesId: null } });
  });

  test('only the uploader or staff change a brain; only staff verify it', () => {
    expect(() => decideBrain(update({ name: 'x', actor: stranger }), created())).toThrow(ForbiddenError);
    expect(() => decideBrain(update({ verified: true, actor: owner }), created())).toThrow(ForbiddenError);
    expect(decideBrain(update({ verified: false, actor: owner }), created())).toEqual([]);
    expect(decideBrain(update({ verified: true, actor: curator }), created())).toHaveLength(1);
  });
});

describe('delete', () => {
  test('removes the brain and names its file uploads; then it is gone', () => {
    const events = decideBrain({ type: 'DeleteBrain', data: { actor: curator, now } }, created());
    expect(events).toEqual([
      {
        type: 'BrainDeleted',
        data: { brainId: 42, fileUploadIds: ['upload-1'], deletedBy: 1, deletedAt: now },
      },
    ]);
    const gone = given(...decideBrain(create(), initialBrainState()), ...events);
    expect(() => decideBrain({ type: 'DeleteBrain', data: { actor: owner, now } }, gone)).toThrow(
      NotFoundError,
    );
    expect(() => decideBrain(update({ name: 'x', actor: owner }), gone)).toThrow(NotFoundError);
  });

  test('a stranger may not delete it', () => {
    expect(() => decideBrain({ type: 'DeleteBrain', data: { actor: stranger, now } }, created())).toThrow(
      ForbiddenError,
    );
  });
});

const editor = { userId: 20, isStaff: false };
const viewer = { userId: 21, isStaff: false };
const later = '2026-01-02T00:00:00.000Z';
const share = (userId: number, role: 'viewer' | 'editor', actor: typeof owner = owner): BrainCommand => ({
  type: 'ShareBrain',
  data: { userId, role, actor, now },
});

/** Created with this visibility, shared with the editor and the viewer. */
function sharedBrain(visibility: Partial<CreateBrain['data']> = { visibility: 'private' }): BrainState {
  let state = given(...decideBrain(create(visibility), initialBrainState()));
  for (const command of [share(editor.userId, 'editor'), share(viewer.userId, 'viewer')])
    state = decideBrain(command, state).reduce(evolveBrain, state);
  return state;
}

const visibilityOf = (state: BrainState) =>
  state.status === 'active' ? [state.visibility, state.embargoUntil] : undefined;

describe('visibility at create', () => {
  test('public unless asked; private; embargoed with a future embargo_until (normalised)', () => {
    expect(visibilityOf(created())).toEqual(['public', null]);
    expect(
      visibilityOf(given(...decideBrain(create({ visibility: 'private' }), initialBrainState()))),
    ).toEqual(['private', null]);
    const embargoed = decideBrain(
      create({ visibility: 'embargoed', embargoUntil: '2026-01-02T01:00:00+01:00' }),
      initialBrainState(),
    );
    expect(visibilityOf(given(...embargoed))).toEqual(['embargoed', later]);
  });

  test('embargo_until is ignored unless embargoed; embargoed needs one in the future', () => {
    expect(
      visibilityOf(
        given(...decideBrain(create({ visibility: 'private', embargoUntil: later }), initialBrainState())),
      ),
    ).toEqual(['private', null]);
    for (const embargoUntil of [undefined, null, now, '2025-01-01T00:00:00Z', 'soon'])
      expect(
        Object.keys(
          fieldsOf(() => decideBrain(create({ visibility: 'embargoed', embargoUntil }), initialBrainState())),
        ),
      ).toEqual(['embargo_until']);
  });

  test('an event written before visibility existed reads public', () => {
    const [event] = decideBrain(create(), initialBrainState()) as [
      Extract<BrainEvent, { type: 'BrainCreated' }>,
    ];
    const { visibility: _v, embargoUntil: _e, ...old } = event.data;
    expect(visibilityOf(given({ type: 'BrainCreated', data: old }))).toEqual(['public', null]);
  });
});

describe('who may change what', () => {
  test('a brain the actor may not see is not found, whatever the command', () => {
    const state = sharedBrain();
    for (const command of [
      update({ name: 'x', actor: stranger }),
      { type: 'DeleteBrain', data: { actor: stranger, now } } as const,
      share(stranger.userId, 'viewer', stranger),
      { type: 'UnshareBrain', data: { userId: viewer.userId, actor: stranger, now } } as const,
    ])
      expect(() => decideBrain(command, state)).toThrow(NotFoundError);
  });

  test('editors change descriptive fields, never visibility; viewers change nothing', () => {
    const state = sharedBrain();
    expect(decideBrain(update({ name: 'By the editor', actor: editor }), state)).toHaveLength(1);
    expect(() => decideBrain(update({ visibility: 'public', actor: editor }), state)).toThrow(ForbiddenError);
    expect(() => decideBrain(update({ name: 'x', actor: viewer }), state)).toThrow(ForbiddenError);
    // The visibility the brain has, sent back (a PUT of a GET body), is no change: allowed.
    expect(
      decideBrain(update({ name: 'P56', visibility: 'private', embargoUntil: null, actor: editor }), state),
    ).toEqual([]);
  });

  test('only the uploader or staff delete, share or unshare; collaborators get 403', () => {
    const state = sharedBrain();
    for (const actor of [editor, viewer]) {
      expect(() => decideBrain({ type: 'DeleteBrain', data: { actor, now } }, state)).toThrow(ForbiddenError);
      expect(() => decideBrain(share(stranger.userId, 'viewer', actor), state)).toThrow(ForbiddenError);
      expect(() =>
        decideBrain({ type: 'UnshareBrain', data: { userId: viewer.userId, actor, now } }, state),
      ).toThrow(ForbiddenError);
    }
    expect(decideBrain(share(stranger.userId, 'viewer', curator), state)).toHaveLength(1);
  });

  test('a public brain: a stranger sees it, so a change is forbidden, not missing', () => {
    expect(() => decideBrain(update({ name: 'x', actor: stranger }), sharedBrain({}))).toThrow(
      ForbiddenError,
    );
  });
});

describe('changing visibility', () => {
  test('public -> private -> embargoed -> public; setting public or private clears embargo_until', () => {
    let state = created();
    const step = (data: Partial<UpdateBrain['data']>) => {
      const events = decideBrain(update({ ...data, actor: owner }), state);
      state = events.reduce(evolveBrain, state);
      return events.map((e) => (e.type === 'BrainUpdated' ? e.data.changes : e.type));
    };
    expect(step({ visibility: 'private' })).toEqual([{ visibility: 'private' }]);
    expect(step({ visibility: 'embargoed', embargoUntil: later })).toEqual([
      { visibility: 'embargoed', embargoUntil: later },
    ]);
    expect(step({ embargoUntil: '2026-01-03T00:00:00.000Z' })).toEqual([
      { embargoUntil: '2026-01-03T00:00:00.000Z' },
    ]);
    expect(step({ visibility: 'embargoed', embargoUntil: '2026-01-03T00:00:00.000Z' })).toEqual([]);
    expect(step({ visibility: 'public' })).toEqual([{ visibility: 'public', embargoUntil: null }]);
    expect(step({ embargoUntil: later })).toEqual([]);
  });

  test('an ended embargo sent back as public is no change; as embargoed with its past time, 400', () => {
    const state = given(
      ...decideBrain(create({ visibility: 'embargoed', embargoUntil: later }), initialBrainState()),
    );
    const after = '2026-01-05T00:00:00.000Z';
    const at = (data: Omit<UpdateBrain['data'], 'now'>): BrainCommand => ({
      type: 'UpdateBrain',
      data: { ...data, now: after },
    });
    expect(decideBrain(at({ visibility: 'public', embargoUntil: later, actor: owner }), state)).toEqual([]);
    expect(
      Object.keys(
        fieldsOf(() =>
          decideBrain(at({ visibility: 'embargoed', embargoUntil: later, actor: owner }), state),
        ),
      ),
    ).toEqual(['embargo_until']);
  });
});

describe('share and unshare', () => {
  test('added, then the role changed; the same role again is nothing; addedAt is kept', () => {
    let state = created();
    const run = (command: BrainCommand) => {
      const events = decideBrain(command, state);
      state = events.reduce(evolveBrain, state);
      return events.map((e) => e.type);
    };
    expect(run(share(9, 'viewer'))).toEqual(['BrainCollaboratorAdded']);
    expect(run(share(9, 'viewer'))).toEqual([]);
    expect(
      run({ type: 'ShareBrain', data: { userId: 9, role: 'editor', actor: curator, now: later } }),
    ).toEqual(['BrainCollaboratorRoleChanged']);
    expect(state.status === 'active' && state.collaborators).toEqual({
      '9': { role: 'editor', addedAt: now },
    });
    expect(run({ type: 'UnshareBrain', data: { userId: 9, actor: owner, now } })).toEqual([
      'BrainCollaboratorRemoved',
    ]);
    expect(() => run({ type: 'UnshareBrain', data: { userId: 9, actor: owner, now } })).toThrow(
      NotFoundError,
    );
    expect(state.status === 'active' && state.collaborators).toEqual({});
  });

  test('the uploader is no collaborator of their own brain: 400 on user', () => {
    expect(Object.keys(fieldsOf(() => decideBrain(share(owner.userId, 'viewer'), created())))).toEqual([
      'user',
    ]);
  });

  test('a removed collaborator no longer sees a private brain', () => {
    const state = sharedBrain();
    const removed = decideBrain(
      { type: 'UnshareBrain', data: { userId: viewer.userId, actor: owner, now } },
      state,
    ).reduce(evolveBrain, state);
    expect(() => decideBrain(update({ name: 'x', actor: viewer }), removed)).toThrow(NotFoundError);
  });
});

describe('lift an embargo', () => {
  const lift = (at: string): BrainCommand => ({ type: 'LiftEmbargo', data: { now: at } });
  const embargoed = () =>
    given(...decideBrain(create({ visibility: 'embargoed', embargoUntil: later }), initialBrainState()));

  test('nothing before its time; EmbargoLifted at or after it, once; the state reads public, the time kept', () => {
    const state = embargoed();
    expect(decideBrain(lift(now), state)).toEqual([]);
    const events = decideBrain(lift(later), state);
    expect(events).toEqual([
      { type: 'EmbargoLifted', data: { brainId: 42, embargoUntil: later, liftedAt: later } },
    ]);
    const lifted = events.reduce(evolveBrain, state);
    expect(visibilityOf(lifted)).toEqual(['public', later]);
    expect(decideBrain(lift('2027-01-01T00:00:00.000Z'), lifted)).toEqual([]);
  });

  test('nothing for a brain not embargoed, deleted or never created', () => {
    expect(decideBrain(lift(later), created())).toEqual([]);
    expect(decideBrain(lift(later), sharedBrain())).toEqual([]);
    expect(decideBrain(lift(later), initialBrainState())).toEqual([]);
    const gone = given(
      ...decideBrain(create({ visibility: 'embargoed', embargoUntil: later }), initialBrainState()),
      { type: 'BrainDeleted', data: { brainId: 42, fileUploadIds: [], deletedBy: 7, deletedAt: now } },
    );
    expect(decideBrain(lift(later), gone)).toEqual([]);
  });
});
