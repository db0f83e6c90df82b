import { createHash } from 'node:crypto';
import type { Client } from '#tests/support/httpClient';
import { newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startCuratedService } from '#tests/support/curatedService';
import { brainForm, createTaxonomy } from '#tests/e2e/brains/brainFixtures';
import { patternBytes, upload } from './uploadFixtures';

const SIZE = 1024 * 1024 + 17;
const bytes = patternBytes(SIZE);
const etag = `"${createHash('sha256').update(bytes).digest('hex')}"`;

let service: TestService;
let api: Client;
let alice: { token: string };
let bob: { token: string };
let staff: string;
let uploadPath: string;
let brainPath: string;

beforeAll(async () => {
  ({ service, api, staff } = await startCuratedService());
  [alice, bob] = [await newUser(api), await newUser(api)];
  const res = await upload(api, alice.token, 'Gehirn – Maus «P56».nii.gz', bytes);
  expect(res.status).toBe(201);
  uploadPath = `/api/file-uploads/${res.body.id}/download/`;
  const place = await createTaxonomy(api, staff);
  const brain = await api.post('/api/brains/', {
    token: alice.token,
    body: brainForm({ name: 'Ranged', atlas: place.atlas.id }, { name: 'ranged.nii', bytes }),
  });
  expect(brain.status).toBe(201);
  brainPath = `/api/brains/${brain.body.id}/file/`;
});
afterAll(() => service.close());

async function fetchBytes(
  path: string,
  headers: Record<string, string> = {},
  token: string | null = alice.token,
) {
  const response = await fetch(service.url + path, {
    headers: token === null ? headers : { ...headers, Authorization: `Token ${token}` },
  });
  return {
    status: response.status,
    headers: response.headers,
    body: Buffer.from(await response.arrayBuffer()),
  };
}

describe('GET /api/file-uploads/{id}/download/', () => {
  test('the whole file, byte-identical, as an attachment with its name, length and ETag', async () => {
    const res = await fetchBytes(uploadPath);
    expect(res.status).toBe(200);
    expect(res.body.equals(bytes)).toBe(true);
    expect(res.headers.get('content-length')).toBe(String(SIZE));
    expect(res.headers.get('etag')).toBe(etag);
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(res.headers.get('cache-control')).toBe('no-store'); // a private file: no cache keeps it
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="Gehirn _ Maus _P56_.nii.gz"; filename*=UTF-8''Gehirn%20%E2%80%93%20Maus%20%C2%ABP56%C2%BB.nii.gz`,
    );
  });

  test('If-None-Match with the ETag (or *) is 304 without a body; another tag gets the file', async () => {
    for (const tag of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await fetchBytes(uploadPath, { 'If-None-Match': tag });
      expect(res.status).toBe(304);
      expect(res.body).toHaveLength(0);
      expect(res.headers.get('etag')).toBe(etag);
    }
    expect((await fetchBytes(uploadPath, { 'If-None-Match': '"other"' })).status).toBe(200);
  });

  test.each([
    ['the first byte', 'bytes=0-0', 0, 0],
    ['a middle range', 'bytes=1000-70999', 1000, 70_999],
    ['an open-ended range', `bytes=${SIZE - 100}-`, SIZE - 100, SIZE - 1],
    ['a suffix', 'bytes=-500', SIZE - 500, SIZE - 1],
    ['a suffix longer than the file', `bytes=-${SIZE * 2}`, 0, SIZE - 1],
    ['an end past the last byte (clamped)', `bytes=10-${SIZE * 3}`, 10, SIZE - 1],
  ])('%s: 206 with Content-Range and exactly those bytes', async (_label, range, start, end) => {
    const res = await fetchBytes(uploadPath, { Range: range });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes ${start}-${end}/${SIZE}`);
    expect(res.headers.get('content-length')).toBe(String(end - start + 1));
    expect(res.headers.get('etag')).toBe(etag);
    expect(res.body.equals(bytes.subarray(start, end + 1))).toBe(true);
  });

  test.each([`bytes=${SIZE}-`, `bytes=${SIZE + 10}-${SIZE + 20}`, 'bytes=-0'])(
    'an unsatisfiable range (%s) is 416 with Content-Range: bytes */size',
    async (range) => {
      const res = await fetchBytes(uploadPath, { Range: range });
      expect(res.status).toBe(416);
      expect(res.headers.get('content-range')).toBe(`bytes */${SIZE}`);
      expect(JSON.parse(res.body.toString()).detail).toEqual(expect.any(String));
    },
  );

  test.each(['bytes=0-1,5-6', 'items=0-1', 'bytes=5-1', 'bytes=abc'])(
    'a range this service does not serve (%s) gets the whole file',
    async (range) => {
      const res = await fetchBytes(uploadPath, { Range: range });
      expect(res.status).toBe(200);
      expect(res.body.equals(bytes)).toBe(true);
    },
  );

  test('If-Range: the range with the current ETag, the whole file with another validator', async () => {
    const current = await fetchBytes(uploadPath, { Range: 'bytes=0-9', 'If-Range': etag });
    expect(current.status).toBe(206);
    expect(current.body.equals(bytes.subarray(0, 10))).toBe(true);
    for (const validator of ['"stale"', `W/${etag}`, 'Wed, 21 Oct 2015 07:28:00 GMT']) {
      const stale = await fetchBytes(uploadPath, { Range: 'bytes=0-9', 'If-Range': validator });
      expect(stale.status).toBe(200);
      expect(stale.body).toHaveLength(SIZE);
    }
  });

  test('only the owner and staff: another user gets 404, no token 401', async () => {
    expect((await fetchBytes(uploadPath, {}, bob.token)).status).toBe(404);
    expect((await fetchBytes(uploadPath, { Range: 'bytes=0-0' }, bob.token)).status).toBe(404);
    expect((await fetchBytes(uploadPath, {}, null)).status).toBe(401);
    const asStaff = await fetchBytes(uploadPath, {}, staff);
    expect(asStaff.status).toBe(200);
    expect(asStaff.body.equals(bytes)).toBe(true);
    expect((await fetchBytes('/api/file-uploads/not-a-uuid/download/')).status).toBe(404);
  });
});

describe('GET /api/brains/{id}/file/ shares the download behaviour', () => {
  test('ranges, ETag and 304 on the public brain file', async () => {
    const whole = await fetchBytes(brainPath, {}, null);
    expect(whole.status).toBe(200);
    expect(whole.body.equals(bytes)).toBe(true);
    expect(whole.headers.get('etag')).toBe(etag);
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    const part = await fetchBytes(brainPath, { Range: 'bytes=-3' }, null);
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes ${SIZE - 3}-${SIZE - 1}/${SIZE}`);
    expect(part.body.equals(bytes.subarray(SIZE - 3))).toBe(true);
    expect((await fetchBytes(brainPath, { Range: `bytes=${SIZE}-` }, null)).status).toBe(416);
    expect((await fetchBytes(brainPath, { 'If-None-Match': etag }, null)).status).toBe(304);
  });
});
