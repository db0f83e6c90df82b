import { ForbiddenError, InvalidFieldError } from '#shared/domain/domainErrors';
import { decideSpecies, type CreateSpecies } from './decide';
import { evolveSpecies, initialSpeciesState } from './events';

const create = (overrides: Partial<CreateSpecies['data']> = {}): CreateSpecies => ({
  type: 'CreateSpecies',
  data: {
    speciesId: 4,
    name: 'house mouse',
    scientificName: 'Mus musculus',
    description: '',
    categoryId: 3,
    actor: { userId: 1, isStaff: true },
    now: '2026-01-01T00:00:00.000Z',
    ...overrides,
  },
});

test('given nothing, when staff create a species in a category, then it is created', () => {
  const events = decideSpecies(create(), initialSpeciesState());
  expect(events).toEqual([
    {
      type: 'SpeciesCreated',
      data: {
        speciesId: 4,
        name: 'house mouse',
        scientificName: 'Mus musculus',
        description: '',
        categoryId: 3,
        createdBy: 1,
        createdAt: '2026-01-01T00:00:00.000Z',
      },
    },
  ]);
  expect(events.reduce(evolveSpecies, initialSpeciesState())).toEqual({
    status: 'created',
    speciesId: 4,
    categoryId: 3,
  });
});

test('only staff create species', () => {
  expect(() =>
    decideSpecies(create({ actor: { userId: 2, isStaff: false } }), initialSpeciesState()),
  ).toThrow(ForbiddenError);
});

test('a missing category and blank names are reported per field', () => {
  try {
    decideSpecies(create({ categoryId: undefined, name: '', scientificName: '' }), initialSpeciesState());
    throw new Error('expected a validation error');
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidFieldError);
    expect(Object.keys((error as InvalidFieldError).fields).sort()).toEqual([
      'category',
      'name',
      'scientific_name',
    ]);
  }
});
