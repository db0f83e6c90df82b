import { deriveRecordKeys, openResponse, sealResponse } from './recordKeys';
import { canonicalJson, requestFingerprint, type RequestIdentity } from './requestFingerprint';

const secret = Buffer.from('{"token":"bic_pat_secret"}');

describe('sealed responses', () => {
  test('open with the keys of the same scope and key; the ciphertext does not contain the plaintext', () => {
    const keys = deriveRecordKeys('user:7', 'key-1');
    const sealed = sealResponse(keys, secret);
    expect(sealed.includes(Buffer.from('bic_pat_secret'))).toBe(false);
    expect(openResponse(keys, sealed)).toEqual(secret);
    expect(sealResponse(keys, secret)).not.toEqual(sealed); // a fresh nonce every time
  });

  test('another key, another scope, or an altered byte cannot open it', () => {
    const sealed = sealResponse(deriveRecordKeys('user:7', 'key-1'), secret);
    expect(() => openResponse(deriveRecordKeys('user:7', 'key-2'), sealed)).toThrow();
    expect(() => openResponse(deriveRecordKeys('user:8', 'key-1'), sealed)).toThrow();
    const altered = Buffer.from(sealed);
    altered[altered.length - 1]! ^= 1;
    expect(() => openResponse(deriveRecordKeys('user:7', 'key-1'), altered)).toThrow();
  });

  test('the lookup hash and lock id differ per scope and key and are stable', () => {
    const a = deriveRecordKeys('user:7', 'key-1');
    expect(deriveRecordKeys('user:7', 'key-1').lookup).toEqual(a.lookup);
    expect(deriveRecordKeys('user:8', 'key-1').lookup).not.toEqual(a.lookup);
    expect(deriveRecordKeys('user:7', 'key-2').lockId).not.toBe(a.lockId);
  });
});

describe('request fingerprints', () => {
  const keys = deriveRecordKeys('user:7', 'key-1');
  const request = (overrides: Partial<RequestIdentity> = {}): RequestIdentity => ({
    method: 'POST',
    path: '/api/tokens',
    query: '',
    body: { kind: 'json', value: { name: 'ci', expires_at: null } },
    ...overrides,
  });

  test('equal JSON values match whatever their key order', async () => {
    const reordered = request({ body: { kind: 'json', value: { expires_at: null, name: 'ci' } } });
    expect(await requestFingerprint(keys, reordered)).toEqual(await requestFingerprint(keys, request()));
    expect(canonicalJson({ b: [1, { d: 1, c: undefined }], a: 'x' })).toBe('{"a":"x","b":[1,{"d":1}]}');
  });

  test('method, path, query, body and the key itself all count', async () => {
    const base = await requestFingerprint(keys, request());
    const variants: RequestIdentity[] = [
      request({ method: 'PUT' }),
      request({ path: '/api/profile' }),
      request({ query: 'a=1' }),
      request({ body: { kind: 'json', value: { name: 'cd', expires_at: null } } }),
      request({ body: { kind: 'form', value: { name: 'ci', expires_at: null } } }),
      request({ body: { kind: 'none' } }),
    ];
    for (const variant of variants) expect(await requestFingerprint(keys, variant)).not.toEqual(base);
    expect(await requestFingerprint(deriveRecordKeys('user:7', 'key-2'), request())).not.toEqual(base);
  });
});
