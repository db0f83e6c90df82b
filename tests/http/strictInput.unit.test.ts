import { readFileSync } from 'node:fs';
import path from 'node:path';
import { clientErrorResponse } from '#shared/http/createHttpServer';
import { compileFormValidator, compileJsonValidator } from '#shared/http/schemaValidator';
import { unstorableTextErrors } from '#shared/http/storableText';
import {
  LONE_SURROGATE_MESSAGE,
  NULL_CHARACTER_MESSAGE,
  unstorableTextProblem,
} from '#shared/infra/postgres/storableText';
import { orderBy } from '#shared/query/listResponse';
import { INVALID_IMAGE, checkImage } from '#shared/media/checkImage';
import { encodePng } from '#tests/media/imageEncoders';

describe('storable text', () => {
  test.each([
    ['plain', 'Ramón y Cajal 🧠', undefined],
    ['NUL', 'a\u0000b', NULL_CHARACTER_MESSAGE],
    ['lone high surrogate', 'a\ud83e', LONE_SURROGATE_MESSAGE],
    ['lone low surrogate', '\udde0b', LONE_SURROGATE_MESSAGE],
    ['reversed pair', '\udde0\ud83e', LONE_SURROGATE_MESSAGE],
  ])('%s', (_, text, problem) => {
    expect(unstorableTextProblem(text)).toBe(problem);
  });

  test('values and keys anywhere, named like validation errors', () => {
    const parsed: unknown = JSON.parse(
      '{"a":["ok","\\u0000"],"__proto__":{"k\\ud800":1},"n":{"m":"\\udc00"}}',
    );
    expect(unstorableTextErrors(parsed)).toEqual({
      'a.1': [NULL_CHARACTER_MESSAGE],
      '__proto__.k\ud800': [LONE_SURROGATE_MESSAGE],
      'n.m': [LONE_SURROGATE_MESSAGE],
    });
    expect(unstorableTextErrors('\u0000')).toEqual({ non_field_errors: [NULL_CHARACTER_MESSAGE] });
    expect(unstorableTextErrors({ a: [1, true, null, 'fine'] })).toBeUndefined();
  });

  test('deep nesting does not overflow the stack', () => {
    const deep: unknown = JSON.parse(`${'['.repeat(200_000)}"\\u0000"${']'.repeat(200_000)}`);
    const errors = unstorableTextErrors(deep);
    expect(Object.values(errors ?? {})).toEqual([[NULL_CHARACTER_MESSAGE]]);
  });
});

describe('strict scalars', () => {
  const schema = {
    type: 'object',
    properties: {
      name: { type: 'string' },
      note: { type: ['string', 'null'] },
      count: { type: 'integer' },
      ratio: { type: 'number' },
      flag: { type: 'boolean' },
      tags: { type: 'array', items: { type: 'string' } },
      inner: { type: 'object', properties: { size: { type: 'integer' } } },
    },
  };
  const json = compileJsonValidator(schema);
  const form = compileFormValidator(schema);

  test('JSON: numbers are text, booleans are not; integer text is decimal', () => {
    const data = { name: 5, note: null, count: '12', ratio: '2.5e3', flag: true, tags: ['a', 7] };
    expect(json(data)).toBeUndefined();
    expect(data).toEqual({ name: '5', note: null, count: 12, ratio: 2500, flag: true, tags: ['a', '7'] });
    expect(
      json({
        name: false,
        note: true,
        count: '1e2',
        ratio: '0x10',
        tags: ['a', false],
        inner: { size: true },
      }),
    ).toEqual({
      name: ['Not a valid string.'],
      note: ['Not a valid string.'],
      count: ['A valid integer is required.'],
      ratio: ['A valid number is required.'],
      'tags.1': ['Not a valid string.'],
      'inner.size': ['A valid integer is required.'],
    });
    expect(json({ count: true, name: null })).toEqual({
      count: ['A valid integer is required.'],
      name: ['This field may not be null.'],
    });
  });

  test('forms: integers are optionally signed digits with blanks around, nothing else', () => {
    for (const good of ['7', '+7', '-7', ' 7 ', '007'])
      expect([good, form({ count: good })]).toEqual([good, undefined]);
    for (const bad of ['1e2', '0x10', '1.0', '', ' ', 'Infinity', '7a', '1_000']) {
      expect([bad, form({ count: bad })]).toEqual([bad, { count: ['A valid integer is required.'] }]);
    }
    expect(form({ count: ['0x10'] })).toEqual({ count: ['A valid integer is required.'] });
    expect(form({ ratio: 'NaN' })).toEqual({ ratio: ['A valid number is required.'] });
  });
});

test('ordering allow-lists are own properties', () => {
  const columns = { name: 'name' };
  for (const field of ['constructor', '__proto__', 'toString', '-hasOwnProperty', 'valueOf'])
    expect(orderBy(field, columns, 'created_at DESC', 'id')).toBe('created_at DESC, id');
  expect(orderBy('-name,constructor', columns, 'created_at DESC', 'id')).toBe('name DESC, id');
});

describe('image checks', () => {
  const formats = new Set(['png', 'jpeg'] as const);
  const maxPixels = 50_000_000;
  test('an accepted image', () => {
    expect(checkImage(encodePng(4, 3), { formats, maxPixels })).toMatchObject({
      ok: true,
      image: { width: 4, height: 3 },
    });
  });
  test('not an image, a format not accepted, too many pixels', () => {
    expect(checkImage(Buffer.from('hello'), { formats, maxPixels })).toEqual({
      ok: false,
      message: INVALID_IMAGE,
    });
    const tiff = readFileSync(path.join(__dirname, '..', 'fixtures', 'images', 'sample-be.tif'));
    expect(checkImage(tiff, { formats, maxPixels })).toEqual({
      ok: false,
      message: 'TIFF images are not supported. Upload one of: PNG, JPEG.',
    });
    expect(checkImage(encodePng(4, 3), { formats, maxPixels: 11 })).toEqual({
      ok: false,
      message: 'The image is too large: 4×3 pixels (0 megapixels); the limit is 0 megapixels.',
    });
    expect(checkImage(encodePng(4, 3), { formats, maxPixels: 12 }).ok).toBe(true);
  });
});

test('parser errors become complete JSON responses', () => {
  expect(clientErrorResponse('HPE_HEADER_OVERFLOW')).toMatch(
    /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/,
  );
  expect(clientErrorResponse('ERR_HTTP_REQUEST_TIMEOUT')).toMatch(/^HTTP\/1\.1 408 /);
  expect(clientErrorResponse('constructor')).toMatch(/^HTTP\/1\.1 400 /);
  const response = clientErrorResponse('HPE_INVALID_METHOD');
  const [head = '', body = ''] = response.split('\r\n\r\n');
  expect(head.split('\r\n')).toEqual([
    'HTTP/1.1 400 Bad Request',
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    'X-Content-Type-Options: nosniff',
    'Cache-Control: no-store',
  ]);
  expect(JSON.parse(body)).toEqual({ detail: 'Malformed HTTP request.' });
});
