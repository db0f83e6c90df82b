import { ForbiddenError, InvalidFieldError } from '#shared/domain/domainErrors';
import { IMAGE_XOR_URL, decideCategory, type CreateCategory } from './decide';
import { initialCategoryState, evolveCategory } from './events';

const staff = { userId: 1, isStaff: true };
const create = (overrides: Partial<CreateCategory['data']> = {}): CreateCategory => ({
  type: 'CreateCategory',
  data: {
    categoryId: 3,
    name: 'rodents',
    description: 'Mice and rats',
    imageKey: null,
    imageUrl: 'https://example.org/r.png',
    actor: staff,
    now: '2026-01-01T00:00:00.000Z',
    ...overrides,
  },
});

test('given nothing, when staff create a category, then it is created', () => {
  const events = decideCategory(create(), initialCategoryState());
  expect(events).toEqual([
    {
      type: 'CategoryCreated',
      data: {
        categoryId: 3,
        name: 'rodents',
        description: 'Mice and rats',
        imageKey: null,
        imageUrl: 'https://example.org/r.png',
        createdBy: 1,
        createdAt: '2026-01-01T00:00:00.000Z',
      },
    },
  ]);
  expect(events.reduce(evolveCategory, initialCategoryState())).toEqual({
    status: 'created',
    categoryId: 3,
    name: 'rodents',
  });
});

test('only staff create categories', () => {
  expect(() =>
    decideCategory(create({ actor: { userId: 2, isStaff: false } }), initialCategoryState()),
  ).toThrow(ForbiddenError);
});

test('an uploaded image and an image_url together are a non-field error', () => {
  const decide = () => decideCategory(create({ imageKey: 'k' }), initialCategoryState());
  expect(decide).toThrow(InvalidFieldError);
  expect(decide).toThrow(IMAGE_XOR_URL);
});

test('a blank name is refused', () => {
  expect(() => decideCategory(create({ name: '' }), initialCategoryState())).toThrow('name');
});
