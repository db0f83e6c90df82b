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
