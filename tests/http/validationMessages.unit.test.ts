import { compileFormValidator, compileJsonValidator } from '#shared/http/schemaValidator';

const schema = {
  type: 'object',
  properties: {
    email: { type: 'string', format: 'email' },
    expires_at: { type: 'string', format: 'date-time' },
    kind: { type: 'string', enum: ['a', 'b'] },
    note: { type: ['string', 'null'], maxLength: 3 },
    id: { type: 'string', format: 'uuid' },
    items: { type: 'array', items: { type: 'integer' }, maxItems: 2 },
    nested: { type: 'object', properties: { n: { type: 'number' } } },
    flag: { type: 'boolean', default: false },
  },
};

test('DRF wording for common failures', () => {
  const data = {
    email: 'nope',
    expires_at: 'tomorrow',
    kind: 'c',
    note: 'long',
    id: 'x',
    items: [1, 'two', 3],
    nested: { n: 'x' },
  };
  expect(compileJsonValidator(schema)(data)).toEqual({
    email: ['Enter a valid email address.'],
    expires_at: [expect.stringMatching(/^Datetime has wrong format/)],
    kind: ['"c" is not a valid choice.'],
    note: ['Ensure this field has no more than 3 characters.'],
    id: ['Must be a valid UUID.'],
    items: ['Ensure this field has no more than 2 elements.'],
    'items.1': ['A valid integer is required.'],
    'nested.n': ['A valid number is required.'],
  });
});

test('nullable fields accept null and defaults are filled in', () => {
  const data: Record<string, unknown> = { note: null };
  expect(compileJsonValidator(schema)(data)).toBeUndefined();
  expect(data).toEqual({ note: null, flag: false });
});

test('form values are coerced, and a repeated scalar is an error', () => {
  const data: Record<string, unknown> = { flag: 'true', items: '1' };
  expect(compileFormValidator(schema)(data)).toBeUndefined();
  expect(data).toEqual({ flag: true, items: [1] });
  expect(compileFormValidator(schema)({ kind: ['a', 'b'] })).toEqual({ kind: ['Not a valid string.'] });
});

test('additionalProperties: false does not reject unknown fields', () => {
  const strict = { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false };
  expect(compileJsonValidator(strict)({ a: 'x', b: 1 })).toBeUndefined();
});

test('alternatives report one message for the field', () => {
  const alt = {
    type: 'object',
    properties: { atlas: { anyOf: [{ type: 'integer' }, { type: 'string', pattern: '^[a-z-]+$' }] } },
  };
  expect(compileJsonValidator(alt)({ atlas: 'Not A Slug' })).toEqual({ atlas: ['Invalid value.'] });
});
