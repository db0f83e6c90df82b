import { Client as PgClient } from 'pg';
import type { Client } from '#tests/support/httpClient';
import { client, newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startTestService } from '#tests/support/testService';
import { waitFor } from '#tests/support/waitFor';

let service: TestService;
let api: Client;
/** The service's clock runs this far ahead of the wall clock: tests move time instead of sleeping. */
let clockOffsetMs = 0;
const serviceNow = (): number => Date.now() + clockOffsetMs;

beforeAll(async () => {
  service = await startTestService({}, undefined, { clock: () => new Date(serviceNow()) });
  api = client(service.url);
});
afterAll(() => service.close());

const inAnHour = () => new Date(serviceNow() + 3_600_000).toISOString();

describe('POST /api/tokens/', () => {
  test('creates a token whose secret is shown once and works as Bearer and Token', async () => {
    const user = await newUser(api);
    const expiresAt = inAnHour();
    const res = await api.post('/api/tokens/', {
      token: user.token,
      json: { name: 'laptop cli', expires_at: expiresAt },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'laptop cli',
      token: expect.stringMatching(/^bic_pat_[0-9A-Za-z]{40}$/),
      created_at: expect.stringMatching(/Z$/),
      expires_at: new Date(expiresAt).toISOString(),
      is_revoked: false,
      last_used_at: null,
    });
    for (const scheme of ['Bearer', 'Token']) {
      const me = await api.get('/api/auth/me/', { token: res.body.token, scheme });
      expect(me.status).toBe(200);
      expect(me.body.id).toBe(user.id);
    }
    const listed = await api.get('/api/tokens/', { token: user.token });
    expect(JSON.stringify(listed.body)).not.toContain(res.body.token);
  });

  test('validates name and expiry', async () => {
    const user = await newUser(api);
    const noName = await api.post('/api/tokens/', { token: user.token, json: {} });
    expect(noName.status).toBe(400);
    expect(noName.body).toEqual({ name: [expect.any(String)] });
    const longName = await api.post('/api/tokens/', { token: user.token, json: { name: 'x'.repeat(101) } });
    expect(longName.status).toBe(400);
    const past = await api.post('/api/tokens/', {
      token: user.token,
      json: { name: 'old', expires_at: '2020-01-01T00:00:00Z' },
    });
    expect(past.status).toBe(400);
    expect(past.body).toEqual({ expires_at: [expect.any(String)] });
    const garbage = await api.post('/api/tokens/', {
      token: user.token,
      json: { name: 'x', expires_at: 'next tuesday' },
    });
    expect(garbage.status).toBe(400);
    expect((await api.post('/api/tokens/', { json: { name: 'anon' } })).status).toBe(401);
  });

  test('an expired token is refused with 401', async () => {
    const user = await newUser(api);
    const res = await api.post('/api/tokens/', {
      token: user.token,
      json: { name: 'brief', expires_at: new Date(serviceNow() + 60_000).toISOString() },
    });
    expect((await api.get('/api/auth/me/', { token: res.body.token, scheme: 'Bearer' })).status).toBe(200);
    clockOffsetMs += 61_000; // expiry is a point in time on the service's clock: move it past
    const after = await api.get('/api/auth/me/', { token: res.body.token, scheme: 'Bearer' });
    expect(after.status).toBe(401);
    expect(after.body.detail).toMatch(/expired/i);
  });
});

describe('GET /api/tokens/', () => {
  test("lists only the caller's non-revoked personal tokens, newest first, as an array", async () => {
    const user = await newUser(api);
    const stranger = await newUser(api);
    await api.post('/api/tokens/', { token: stranger.token, json: { name: 'not yours' } });
    const names = ['first', 'second', 'third'];
    const created = [];
    for (const name of names)
      created.push((await api.post('/api/tokens/', { token: user.token, json: { name } })).body);
    await api.delete(`/api/tokens/${created[1].id}/`, { token: user.token });
    const res = await api.get('/api/tokens/', { token: user.token });
    expect(res.status).toBe(200);
    expect(res.body.map((t: { name: string }) => t.name)).toEqual(['third', 'first']);
    expect(res.body[0]).toEqual({
      id: created[2].id,
      name: 'third',
      created_at: created[2].created_at,
      last_used_at: null,
      expires_at: null,
      is_revoked: false,
    });
  });

  test('paginates with page/page_size into {count, next, previous, results}', async () => {
    const user = await newUser(api);
    for (let i = 0; i < 5; i++)
      await api.post('/api/tokens/', { token: user.token, json: { name: `t${i}` } });
    const first = await api.get('/api/tokens/?page_size=2', { token: user.token });
    expect(first.status).toBe(200);
    expect(first.body.count).toBe(5);
    expect(first.body.previous).toBeNull();
    expect(first.body.results.map((t: { name: string }) => t.name)).toEqual(['t4', 't3']);
    expect(first.body.next).toMatch(/^http:\/\/.+\/api\/tokens\/\?.*page=2/);
    const second = await api.get(new URL(first.body.next).pathname + new URL(first.body.next).search, {
      token: user.token,
    });
    expect(second.body.results.map((t: { name: string }) => t.name)).toEqual(['t2', 't1']);
    expect(second.body.previous).toMatch(/page=1/);
    const last = await api.get('/api/tokens/?page=3&page_size=2', { token: user.token });
    expect(last.body.next).toBeNull();
    expect(last.body.results).toHaveLength(1);
    expect(await api.get('/api/tokens/?page=4&page_size=2', { token: user.token })).toMatchObject({
      status: 404,
      body: { detail: 'Invalid page.' },
    });
    expect((await api.get('/api/tokens/?page=0', { token: user.token })).status).toBe(400);
    expect((await api.get('/api/tokens/?page_size=abc', { token: user.token })).status).toBe(400);
    const clamped = await api.get('/api/tokens/?page_size=5000', { token: user.token });
    expect(clamped.status).toBe(200);
    expect(clamped.body.next).toBeNull();
    const defaults = await api.get('/api/tokens/?page=1', { token: user.token });
    expect(defaults.body.results).toHaveLength(5); // default page_size 20
  });

  test('last_used_at is set once a token is used', async () => {
    const user = await newUser(api);
    const pat = (await api.post('/api/tokens/', { token: user.token, json: { name: 'used' } })).body;
    await api.get('/api/auth/me/', { token: pat.token, scheme: 'Bearer' });
    const lastUsed = await waitFor(
      'the token list to show last_used_at',
      async (): Promise<string | null> =>
        (await api.get('/api/tokens/', { token: user.token })).body[0].last_used_at,
      { timeoutMs: 5000, intervalMs: 100 },
    );
    expect(Date.parse(lastUsed!)).toBeGreaterThanOrEqual(Date.parse(pat.created_at));
  });

  test('needs authentication', async () => {
    expect((await api.get('/api/tokens/')).status).toBe(401);
  });
});

describe('DELETE /api/tokens/{id}/', () => {
  test('revokes at once (401 on next use), and again is 204', async () => {
    const user = await newUser(api);
    const pat = (await api.post('/api/tokens/', { token: user.token, json: { name: 'doomed' } })).body;
    expect((await api.get('/api/auth/me/', { token: pat.token, scheme: 'Bearer' })).status).toBe(200);
    const res = await api.delete(`/api/tokens/${pat.id}/`, { token: user.token });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await api.get('/api/auth/me/', { token: pat.token, scheme: 'Bearer' })).status).toBe(401);
    expect((await api.delete(`/api/tokens/${pat.id}`, { token: user.token })).status).toBe(204);
  });

  test("another user's token is 403 and stays valid; unknown ids are 404", async () => {
    const owner = await newUser(api);
    const intruder = await newUser(api);
    const pat = (await api.post('/api/tokens/', { token: owner.token, json: { name: 'mine' } })).body;
    const res = await api.delete(`/api/tokens/${pat.id}/`, { token: intruder.token });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ detail: expect.any(String) });
    expect((await api.get('/api/auth/me/', { token: pat.token, scheme: 'Bearer' })).status).toBe(200);
    expect(
      (await api.delete('/api/tokens/00000000-0000-4000-8000-000000000000/', { token: owner.token })).status,
    ).toBe(404);
    expect((await api.delete('/api/tokens/not-a-uuid/', { token: owner.token })).status).toBe(404);
    expect((await api.delete(`/api/tokens/${pat.id}/`)).status).toBe(401);
  });

  test('the token hash, never the secret, is what the service stores', async () => {
    const user = await newUser(api);
    const pat = (await api.post('/api/tokens/', { token: user.token, json: { name: 'secret' } })).body;
    const db = new PgClient({ connectionString: service.databaseUrl });
    await db.connect();
    try {
      const everything = await db.query(`SELECT data::text || metadata::text AS t FROM event_store.events
                                         UNION ALL SELECT row_to_json(a)::text FROM access_tokens a`);
      for (const row of everything.rows) {
        expect(row.t).not.toContain(pat.token);
        expect(row.t).not.toContain(user.token);
      }
    } finally {
      await db.end();
    }
  });
});
