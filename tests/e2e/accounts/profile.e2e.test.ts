import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '#tests/support/httpClient';
import { client, newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startTestService } from '#tests/support/testService';

let service: TestService;
let api: Client;
const fixtures = path.join(__dirname, '..', '..', 'fixtures', 'images');
const png = readFileSync(path.join(fixtures, 'sample.png'));

beforeAll(async () => {
  service = await startTestService({
    MAX_AVATAR_BYTES: String(64 * 1024),
    ADMIN_EMAIL: 'curator@example.org',
    ADMIN_PASSWORD: 'curator-password',
    ADMIN_USERNAME: 'curator',
  });
  api = client(service.url);
});
afterAll(() => service.close());

function form(
  fields: Record<string, string>,
  file?: { field: string; name: string; bytes: Buffer; type: string },
): FormData {
  const data = new FormData();
  for (const [k, v] of Object.entries(fields)) data.append(k, v);
  if (file) data.append(file.field, new Blob([file.bytes], { type: file.type }), file.name);
  return data;
}

/** Every stored blob (avatars) under the service's data directory. */
function storedBlobs(): string[] {
  const root = path.join(service.dataDir, 'blobs');
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const full = path.join(dir, name);
      return statSync(full).isDirectory() ? walk(full) : [full];
    });
  try {
    return walk(root).filter((f) => !f.endsWith('.meta.json'));
  } catch {
    return [];
  }
}

describe('GET /api/profile/', () => {
  test('returns the profile with the researchers group', async () => {
    const user = await newUser(api);
    const res = await api.get('/api/profile/', { token: user.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: user.id,
      email: user.email,
      first_name: user.first_name,
      last_name: user.last_name,
      avatar: null,
      bio: '',
      location: '',
      group: { id: 1, name: 'researchers' },
    });
    expect((await api.get('/api/profile/')).status).toBe(401);
  });

  test('staff ensured from ADMIN_* at start-up log in as staff, in the curators group', async () => {
    const login = await api.post('/api/auth/login/', {
      json: { email: 'curator@example.org', password: 'curator-password' },
    });
    expect(login.status).toBe(200);
    expect(login.body.user.is_staff).toBe(true);
    const profile = await api.get('/api/profile/', { token: login.body.token });
    expect(profile.body.group).toEqual({ id: 2, name: 'curators' });
  });
});

describe('PATCH /api/profile/', () => {
  test('JSON updates return the new profile, and later reads see them', async () => {
    const user = await newUser(api);
    const res = await api.patch('/api/profile/', {
      token: user.token,
      json: { bio: 'Dendritic spines', location: 'Madrid' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: user.id,
      bio: 'Dendritic spines',
      location: 'Madrid',
      first_name: user.first_name,
      group: { id: 1, name: 'researchers' },
    });
    const me = await api.get('/api/auth/me/', { token: user.token });
    expect(me.body).toMatchObject({ bio: 'Dendritic spines', location: 'Madrid' });
    const bad = await api.patch('/api/profile/', { token: user.token, json: { first_name: '' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ first_name: [expect.any(String)] });
  });

  test('multipart with a real image sets the avatar, served back by URL with its bytes', async () => {
    const user = await newUser(api);
    const res = await api.patch('/api/profile/', {
      token: user.token,
      body: form(
        { first_name: 'Santiago', bio: 'Neuron doctrine' },
        { field: 'avatar', name: 'me.png', bytes: png, type: 'image/png' },
      ),
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ first_name: 'Santiago', bio: 'Neuron doctrine' });
    expect(res.body.avatar).toMatch(new RegExp(`^${service.url}/media/avatars/${user.id}/.+\\.png/$`));
    const image = await fetch(res.body.avatar);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await image.arrayBuffer()).equals(png)).toBe(true);
    expect((await api.get('/api/auth/me/', { token: user.token })).body.avatar).toBe(res.body.avatar);

    // Replacing the avatar deletes the old bytes.
    const jpeg = readFileSync(path.join(fixtures, 'sample.jpg'));
    const replaced = await api.patch('/api/profile/', {
      token: user.token,
      body: form({}, { field: 'avatar', name: 'me.jpg', bytes: jpeg, type: 'image/jpeg' }),
    });
    expect(replaced.status).toBe(200);
    expect((await fetch(res.body.avatar)).status).toBe(404);
    expect((await fetch(replaced.body.avatar)).headers.get('content-type')).toBe('image/jpeg');
  });

  test('a file that is not an image is refused and leaves no bytes behind', async () => {
    const user = await newUser(api);
    const before = storedBlobs().length;
    const res = await api.patch('/api/profile/', {
      token: user.token,
      body: form(
        { bio: 'should not be saved' },
        {
          field: 'avatar',
          name: 'me.png',
          bytes: readFileSync(path.join(fixtures, 'not-an-image.png')),
          type: 'image/png',
        },
      ),
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ avatar: [expect.stringMatching(/valid image/)] });
    expect(storedBlobs()).toHaveLength(before);
    expect((await api.get('/api/profile/', { token: user.token })).body.bio).toBe('');
  });

  test('an avatar over the size limit is 413 and leaves no bytes behind', async () => {
    const user = await newUser(api);
    const before = storedBlobs().length;
    const big = Buffer.concat([png, Buffer.alloc(100 * 1024)]);
    const res = await api.patch('/api/profile/', {
      token: user.token,
      body: form({}, { field: 'avatar', name: 'big.png', bytes: big, type: 'image/png' }),
    });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ detail: expect.any(String) });
    expect(storedBlobs()).toHaveLength(before);
  });

  test('an unknown avatar URL is 404', async () => {
    expect((await api.get('/media/avatars/1/nope.png/')).status).toBe(404);
  });
});

describe('optimistic concurrency on the profile', () => {
  test('GET gives a weak ETag; PATCH with a stale If-Match is 409, with the current one 200', async () => {
    const user = await newUser(api);
    const read = await api.get('/api/profile/', { token: user.token });
    const etag = read.headers.get('etag')!;
    expect(etag).toMatch(/^W\/"\d+"$/);
    const first = await api.patch('/api/profile/', {
      token: user.token,
      json: { bio: 'first' },
      headers: { 'If-Match': etag },
    });
    expect(first.status).toBe(200);
    expect(first.headers.get('etag')).not.toBe(etag);
    const stale = await api.patch('/api/profile/', {
      token: user.token,
      json: { bio: 'lost update' },
      headers: { 'If-Match': etag },
    });
    expect(stale.status).toBe(409);
    expect(stale.body).toEqual({ detail: expect.any(String) });
    expect((await api.get('/api/profile/', { token: user.token })).body.bio).toBe('first');
    const fresh = await api.patch('/api/profile/', {
      token: user.token,
      json: { bio: 'second' },
      headers: { 'If-Match': first.headers.get('etag')! },
    });
    expect(fresh.status).toBe(200);
    expect((await api.get('/api/profile/', { token: user.token })).headers.get('etag')).toBe(
      fresh.headers.get('etag'),
    );
  });
});
