import net from 'node:net';
import type { Client } from '#tests/support/httpClient';
import { newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startCuratedService } from '#tests/support/curatedService';
import { rawRequest } from '#tests/http/support/rawRequest';
import { brainForm, createTaxonomy, nifti, type Taxonomy } from './brains/brainFixtures';
import { upload } from './uploads/uploadFixtures';
import { waitFor } from '#tests/support/waitFor';

let service: TestService;
let api: Client;
let staff: string;
let alice: { id: number; token: string };
let bob: { id: number; token: string };
let place: Taxonomy;
let brain: { id: number; readable_id: string };

beforeAll(async () => {
  ({ service, api, staff } = await startCuratedService());
  [alice, bob] = await Promise.all([newUser(api), newUser(api)]);
  place = await createTaxonomy(api, staff);
  const created = await api.post('/api/brains/', {
    token: alice.token,
    body: brainForm({ name: 'Edge', atlas: place.atlas.id }, nifti()),
  });
  if (created.status !== 201) throw new Error(`brain: ${created.status} ${created.text}`);
  brain = created.body;
  // Its file processed: the answer (preview_url, metadata) and so its ETag no longer change under
  // the conditional-request tests.
  await waitFor(
    'the brain to have its preview',
    () =>
      api
        .get(`/api/brains/${brain.id}/`)
        .then((res) => (res.body as { preview_url?: string | null }).preview_url),
    { until: (url) => typeof url === 'string' },
  );
});
afterAll(() => service.close());

const INT_MAX = 2_147_483_647;

describe('integer filters and path ids beyond the database integer (finding 6)', () => {
  test.each([
    ['/api/brains/?uploader=2147483648', 'uploader'],
    ['/api/brains/?uploader=99999999999999999999', 'uploader'],
    ['/api/brains/?page=1&uploader=2147483648', 'uploader'],
  ])('anonymous %s is 400 on %s, not 500', async (path, field) => {
    const res = await api.get(path);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ [field]: [`Ensure this value is less than or equal to ${INT_MAX}.`] });
  });

  test('the largest database integer is still a valid filter value', async () => {
    const res = await api.get(`/api/brains/?uploader=${INT_MAX}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });

  test.each([
    '/api/file-uploads/?associated_brain=2147483648',
    '/api/file-uploads/?associated_brain=99999999999999999999',
  ])('%s is 400 on associated_brain', async (path) => {
    const res = await api.get(path, { token: alice.token });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['associated_brain']);
  });

  test.each([
    '/api/atlases/?species=2147483648',
    '/api/atlases/?species=99999999999999999999',
    '/api/species/?category=2147483648',
    '/api/brains/?atlas=2147483648',
    '/api/brains/?category=99999999999999999999',
  ])('an id-or-name filter %s with too large a number matches nothing (200)', async (path) => {
    const res = await api.get(path);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });

  test.each([
    '/api/brains/2147483648/',
    '/api/brains/99999999999999999999/',
    '/api/brains/2147483648/file/',
    '/api/brains/2147483648/preview/',
    '/media/avatars/2147483648/a.png/',
  ])('a path id out of range is 404 like any missing record: %s', async (path) => {
    const res = await api.get(path);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: expect.any(String) });
  });

  test('a path id out of range on writes is 404 too', async () => {
    for (const method of ['patch', 'delete'] as const) {
      const res = await api[method]('/api/brains/2147483648/', { token: alice.token, json: { name: 'x' } });
      expect(res.status).toBe(404);
    }
  });

  test('page numbers of any size are pages: beyond the last is 404 Invalid page.', async () => {
    for (const page of ['2147483648', '9007199254740991']) {
      const res = await api.get(`/api/brains/?page=${page}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Invalid page.' });
    }
    const huge = await api.get('/api/brains/?page_size=2147483648');
    expect(huge.status).toBe(200); // clamped to 100
    expect(huge.body.results).toHaveLength(1);
    const tooLarge = await api.get('/api/brains/?page=99999999999999999999');
    expect(tooLarge.status).toBe(400);
    expect(Object.keys(tooLarge.body)).toEqual(['page']);
  });

  test('an integer in a JSON body beyond the database integer is 400 on its field', async () => {
    const res = await api.patch(`/api/brains/${brain.id}/`, { token: alice.token, json: { atlas: 2 ** 31 } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ atlas: [`Ensure this value is less than or equal to ${INT_MAX}.`] });
  });
});

describe('ids compared in one canonical form (finding 7)', () => {
  async function personalToken(owner: { token: string }) {
    const res = await api.post('/api/tokens/', { token: owner.token, json: { name: 'cli' } });
    return res.body as { id: string; token: string };
  }

  test('the owner revokes a token by its id in capitals: 204, and the token stops working', async () => {
    const pat = await personalToken(alice);
    const res = await api.delete(`/api/tokens/${pat.id.toUpperCase()}/`, { token: alice.token });
    expect(res.status).toBe(204);
    expect((await api.get('/api/auth/me/', { token: pat.token })).status).toBe(401);
  });

  test('another user gets 403 whatever the case of the id; the token keeps working', async () => {
    const pat = await personalToken(alice);
    for (const id of [
      pat.id,
      pat.id.toUpperCase(),
      `${pat.id.slice(0, 8).toUpperCase()}${pat.id.slice(8)}`,
    ]) {
      expect((await api.delete(`/api/tokens/${id}/`, { token: bob.token })).status).toBe(403);
    }
    expect((await api.get('/api/auth/me/', { token: pat.token })).status).toBe(200);
  });

  test('file upload ids in capitals name the same upload on every route', async () => {
    const created = await upload(api, alice.token, 'scan.nii', nifti().bytes);
    expect(created.status).toBe(201);
    const upper = (created.body.id as string).toUpperCase();
    const detail = await api.get(`/api/file-uploads/${upper}/`, { token: alice.token });
    expect(detail.status).toBe(200);
    expect(detail.body.id).toBe(created.body.id);
    expect((await api.get(`/api/file-uploads/${upper}/download/`, { token: alice.token })).status).toBe(200);
    expect((await api.get(`/api/file-uploads/${upper}/`, { token: bob.token })).status).toBe(404);
    expect((await api.delete(`/api/file-uploads/${upper}/`, { token: bob.token })).status).toBe(404);
    expect((await api.delete(`/api/file-uploads/${upper}/`, { token: alice.token })).status).toBe(204);
    expect((await api.get(`/api/file-uploads/${created.body.id}/`, { token: alice.token })).status).toBe(404);
  });
});

describe('security headers (finding 8)', () => {
  test('the 201 carrying a new token secret is never stored and never sniffed', async () => {
    const res = await api.post('/api/tokens/', { token: alice.token, json: { name: 'secret' } });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  test.each([
    ['GET', '/api/auth/me/'],
    ['GET', '/api/profile/'],
    ['GET', '/api/tokens/'],
    ['GET', '/api/file-uploads/'],
  ])('%s %s (personal data) is no-store', async (method, path) => {
    const res = await api.request(method, path, { token: alice.token });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  test('login, errors and unknown routes are no-store and nosniff', async () => {
    const login = await api.post('/api/auth/login/', {
      json: { email: 'nobody@example.org', password: 'x' },
    });
    const missing = await api.get('/api/nothing-here/');
    const anonymous = await api.get('/api/auth/me/');
    const malformed = await api.post('/api/auth/login/', {
      body: '{',
      headers: { 'Content-Type': 'application/json' },
    });
    for (const res of [login, missing, anonymous, malformed]) {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
  });

  test('a file upload (detail and download) is no-store', async () => {
    const created = await upload(api, alice.token, 'headers.nii', nifti().bytes);
    for (const path of [
      `/api/file-uploads/${created.body.id}/`,
      `/api/file-uploads/${created.body.id}/download/`,
    ]) {
      const res = await api.get(path, { token: alice.token });
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  test('a public catalogue read keeps its ETag and conditional answer, and is not no-store', async () => {
    const first = await rawRequest(`${service.url}/api/brains/${brain.id}/`);
    expect(first.status).toBe(200);
    expect(first.headers['x-content-type-options']).toBe('nosniff');
    expect(first.headers['cache-control']).toBeUndefined();
    expect(first.headers.vary).toMatch(/Authorization/);
    const etag = first.headers.etag!;
    const again = await rawRequest(`${service.url}/api/brains/${brain.id}/`, {
      headers: { 'If-None-Match': etag },
    });
    expect(again.status).toBe(304);
    // With credentials the answer may depend on who asks: the asker's own cache only.
    const signedIn = await rawRequest(`${service.url}/api/brains/${brain.id}/`, {
      headers: { Authorization: `Token ${alice.token}`, 'If-None-Match': etag },
    });
    expect(signedIn.status).toBe(304);
    expect(signedIn.headers['cache-control']).toBe('private, no-cache');
    for (const path of ['/api/brains/', '/api/categories/', '/api/species/', '/api/atlases/']) {
      const res = await rawRequest(`${service.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBeUndefined();
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  test('the raw answer to a request the HTTP parser refuses is nosniff too', async () => {
    const { hostname, port } = new URL(service.url);
    const socket = net.connect(Number(port), hostname);
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.write('NOT A REQUEST\r\n\r\n');
    await new Promise((resolve) => socket.once('close', resolve));
    expect(received).toMatch(/^HTTP\/1\.1 400 /);
    expect(received.toLowerCase()).toContain('x-content-type-options: nosniff');
  });
});

/** A request with the given raw header lines (Node's clients would merge or refuse duplicates). */
function sendRaw(
  method: string,
  path: string,
  headerLines: string[],
  body = '',
): Promise<{ status: number; body: unknown }> {
  const { hostname, port } = new URL(service.url);
  const socket = net.connect(Number(port), hostname);
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.write(
    [
      `${method} ${path} HTTP/1.1`,
      `Host: ${hostname}:${port}`,
      'Connection: close',
      ...headerLines,
      ...(body ? ['Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`] : []),
      '',
      body,
    ].join('\r\n'),
  );
  return new Promise((resolve) =>
    socket.once('close', () => {
      const [head = '', text = ''] = received.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), body: text ? (JSON.parse(text) as unknown) : undefined });
    }),
  );
}

describe('duplicate credential headers (finding 9)', () => {
  test.each([
    [
      'two Authorization headers',
      (a: string, b: string) => [`Authorization: Token ${a}`, `Authorization: Token ${b}`],
    ],
    ['the same one twice', (a: string) => [`Authorization: Token ${a}`, `Authorization: Token ${a}`]],
    [
      'in different cases',
      (a: string, b: string) => [`authorization: Token ${a}`, `AUTHORIZATION: Bearer ${b}`],
    ],
    [
      'two Proxy-Authorization headers',
      (a: string) => [
        `Authorization: Token ${a}`,
        'Proxy-Authorization: Basic eA==',
        'proxy-authorization: Basic eQ==',
      ],
    ],
  ])('%s: 400 {"detail"}, nothing done', async (_, lines) => {
    const res = await sendRaw('GET', '/api/auth/me/', lines(alice.token, bob.token));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ detail: expect.stringMatching(/Authorization/) });
  });

  test('a write with two Authorization headers is refused before it runs', async () => {
    const res = await sendRaw(
      'POST',
      '/api/tokens/',
      [`Authorization: Token ${alice.token}`, `Authorization: Token ${bob.token}`],
      JSON.stringify({ name: 'twice' }),
    );
    expect(res.status).toBe(400);
    for (const user of [alice, bob]) {
      const tokens = (await api.get('/api/tokens/', { token: user.token })).body as { name: string }[];
      expect(tokens.map((t) => t.name)).not.toContain('twice');
    }
  });

  test('one Authorization header (with one Proxy-Authorization) still works', async () => {
    const res = await sendRaw('GET', '/api/auth/me/', [
      `Authorization: Token ${alice.token}`,
      'Proxy-Authorization: Basic eA==',
    ]);
    expect(res.status).toBe(200);
    expect((res.body as { id: number }).id).toBe(alice.id);
  });
});
