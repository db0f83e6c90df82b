import type { IncomingMessage } from 'node:http';
import { ConfigError, loadConfig } from '#shared/config/config';
import { authorizationHeaderOf } from '#shared/http/credentialHeader';
import {
  DATABASE_INTEGER_MAX,
  canonicalUuid,
  canonicaliseUuidFields,
  databaseIdOf,
  withCanonicalUuids,
} from '#shared/http/ids';
import { compileFormValidator, compileJsonValidator } from '#shared/http/schemaValidator';
import { cacheControlOf } from '#shared/http/securityHeaders';
import { listQueryProperties } from '#shared/query/listResponse';

const UUID = '3f0c2e44-7a59-4a8e-9e43-2b1c9f3d8a10';

describe('database ids', () => {
  test.each([
    ['1', 1],
    ['2147483647', DATABASE_INTEGER_MAX],
    ['0002147483647', DATABASE_INTEGER_MAX],
    ['2147483648', undefined],
    ['99999999999999999999', undefined],
    ['0', undefined],
    ['-1', undefined],
    ['1e3', undefined],
    [' 7', undefined],
    ['abc', undefined],
  ])('databaseIdOf(%j) is %j', (text, id) => {
    expect(databaseIdOf(text)).toBe(id);
  });

  test('integer query values beyond the database integer are refused on their field', () => {
    const validate = compileFormValidator({
      type: 'object',
      properties: { uploader: { type: 'integer', minimum: 1 }, offset: { type: 'integer' } },
    });
    expect(validate({ uploader: '2147483647' })).toBeUndefined();
    expect(validate({ uploader: '2147483648' })).toEqual({
      uploader: ['Ensure this value is less than or equal to 2147483647.'],
    });
    expect(validate({ uploader: ['99999999999999999999'] })).toEqual({
      uploader: ['Ensure this value is less than or equal to 2147483647.'],
    });
    expect(validate({ offset: '-2147483649' })).toEqual({
      offset: ['Ensure this value is greater than or equal to -2147483648.'],
    });
  });

  test('JSON integers too, as numbers or as text; nested ones too', () => {
    const validate = compileJsonValidator({
      type: 'object',
      properties: {
        atlas: { type: ['integer', 'null'] },
        nested: { type: 'object', properties: { ids: { type: 'array', items: { type: 'integer' } } } },
      },
    });
    expect(validate({ atlas: 2 ** 31 })).toEqual({ atlas: [expect.stringContaining('2147483647')] });
    expect(validate({ atlas: '2147483648' })).toEqual({ atlas: [expect.stringContaining('2147483647')] });
    expect(validate({ atlas: null })).toBeUndefined();
    expect(validate({ nested: { ids: [1, 2 ** 40] } })).toEqual({
      'nested.ids.1': [expect.stringContaining('2147483647')],
    });
  });

  test('page numbers are not database integers: any safe integer is a page', () => {
    const validate = compileFormValidator({ type: 'object', properties: listQueryProperties });
    expect(validate({ page: '2147483648', page_size: '2147483648' })).toBeUndefined();
    expect(validate({ page: '99999999999999999999' })).toEqual({ page: [expect.any(String)] });
  });
});

describe('UUIDs in one form', () => {
  test('canonicalUuid lowercases UUIDs and refuses anything else', () => {
    expect(canonicalUuid(UUID.toUpperCase())).toBe(UUID);
    expect(canonicalUuid(UUID)).toBe(UUID);
    expect(canonicalUuid(`${UUID}x`)).toBeUndefined();
    expect(canonicalUuid('not-a-uuid')).toBeUndefined();
  });

  test('path parameters: UUIDs lowercased, other values kept as sent', () => {
    expect(withCanonicalUuids({ id: UUID.toUpperCase(), name: 'Mus Musculus' })).toEqual({
      id: UUID,
      name: 'Mus Musculus',
    });
  });

  test('query and body fields declared format uuid are lowercased, others are not', () => {
    const schema = {
      type: 'object',
      properties: {
        upload: { type: 'string', format: 'uuid' },
        name: { type: 'string' },
        uploads: { type: 'array', items: { type: 'string', format: 'uuid' } },
        nested: { type: 'object', properties: { token: { type: 'string', format: 'uuid' } } },
      },
    };
    const data = {
      upload: UUID.toUpperCase(),
      name: UUID.toUpperCase(),
      uploads: [UUID.toUpperCase()],
      nested: { token: UUID.toUpperCase() },
    };
    canonicaliseUuidFields(schema, data);
    expect(data).toEqual({
      upload: UUID,
      name: UUID.toUpperCase(),
      uploads: [UUID],
      nested: { token: UUID },
    });
  });
});

describe('credential headers', () => {
  const request = (rawHeaders: string[]) =>
    ({
      rawHeaders,
      headers: Object.fromEntries(
        rawHeaders.flatMap((v, i) => (i % 2 === 0 ? [[v.toLowerCase(), rawHeaders[i + 1]]] : [])).reverse(),
      ),
    }) as unknown as IncomingMessage;

  test('one Authorization header is the credential; none is undefined', () => {
    expect(authorizationHeaderOf(request(['Authorization', 'Token a', 'Accept', '*/*']))).toBe('Token a');
    expect(authorizationHeaderOf(request(['Accept', '*/*']))).toBeUndefined();
  });

  test.each([
    [['Authorization', 'Token a', 'authorization', 'Token b']],
    [['AUTHORIZATION', 'Token a', 'Authorization', 'Token a']],
    [['Proxy-Authorization', 'Basic a', 'Authorization', 'Token a', 'proxy-authorization', 'Basic b']],
  ])('a credential header twice is 400 %j', (raw) => {
    expect(() => authorizationHeaderOf(request(raw))).toThrow(
      expect.objectContaining({ status: 400, detail: expect.stringContaining('Authorization') }),
    );
  });
});

describe('Cache-Control', () => {
  test('only public reads may be kept; with credentials, by the asker only', () => {
    expect(cacheControlOf(false, false, undefined)).toBe('no-store');
    expect(cacheControlOf(false, true, 'private, no-cache')).toBe('no-store');
    expect(cacheControlOf(true, false, undefined)).toBeUndefined();
    expect(cacheControlOf(true, true, undefined)).toBe('private, no-cache');
    expect(cacheControlOf(true, true, 'public, max-age=60')).toBe('public, max-age=60');
  });
});

describe('HTTP timeouts configuration', () => {
  test('defaults below a gateway’s, and each settable', () => {
    expect(loadConfig({}).httpTimeouts).toEqual({
      headersTimeoutMs: 20_000,
      bodyTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
    });
    expect(
      loadConfig({
        HTTP_HEADERS_TIMEOUT_MS: '1000',
        HTTP_BODY_TIMEOUT_MS: '500',
        HTTP_KEEP_ALIVE_TIMEOUT_MS: '300',
      }).httpTimeouts,
    ).toEqual({ headersTimeoutMs: 1000, bodyTimeoutMs: 500, keepAliveTimeoutMs: 300 });
  });

  test.each([
    ['HTTP_BODY_TIMEOUT_MS', '0'],
    ['HTTP_BODY_TIMEOUT_MS', '30s'],
    ['HTTP_HEADERS_TIMEOUT_MS', '3600001'],
    ['HTTP_KEEP_ALIVE_TIMEOUT_MS', '-5'],
  ])('%s=%s stops start-up naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });
});
