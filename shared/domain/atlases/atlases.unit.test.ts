import { ForbiddenError, InvalidFieldError } from '#shared/domain/domainErrors';
import { decideAtlas, type CreateAtlas } from './decide';
import { evolveAtlas, initialAtlasState } from './events';

const member = { userId: 9, isStaff: false };
const create = (overrides: Partial<CreateAtlas['data']> = {}): CreateAtlas => ({
  type: 'CreateAtlas',
  data: {
    atlasId: 5,
    name: ' Allen Mouse CCFv3 ',
    slug: 'allen-mouse-ccfv3',
    description: 'Common coordinate framework',
    speciesId: 4,
    isOfficial: false,
    verified: false,
    version: '2017',
    color: '#aabbcc',
    publicationUrl: 'https://doi.org/10.1016/j.cell.2020.04.007',
    actor: member,
    now: '2026-01-01T00:00:00.000Z',
    ...overrides,
  },
});

test('any member creates an atlas of an existing species', () => {
  const events = decideAtlas(create(), initialAtlasState());
  expect(events).toHaveLength(1);
  expect(events[0]!.data).toMatchObject({
    atlasId: 5,
    name: 'Allen Mouse CCFv3',
    slug: 'allen-mouse-ccfv3',
    createdBy: 9,
  });
  expect(events.reduce(evolveAtlas, initialAtlasState())).toEqual({
    status: 'created',
    atlasId: 5,
    slug: 'allen-mouse-ccfv3',
    speciesId: 4,
  });
});

test.each([{ isOfficial: true }, { verified: true }])('only staff set %o', (flags) => {
  expect(() => decideAtlas(create(flags), initialAtlasState())).toThrow(ForbiddenError);
  expect(
    decideAtlas(create({ ...flags, actor: { userId: 1, isStaff: true } }), initialAtlasState()),
  ).toHaveLength(1);
});

test('an unknown species is a 400 on species', () => {
  expect(() => decideAtlas(create({ speciesId: undefined }), initialAtlasState())).toThrow(InvalidFieldError);
});
