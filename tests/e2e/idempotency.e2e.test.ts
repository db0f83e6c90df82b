import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { deriveRecordKeys } from '#shared/http/idempotency/recordKeys';
import type { ApiResponse, Client } from '#tests/support/httpClient';
import { client, newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startTestService } from '#tests/support/testService';

let service: TestService;
let api: Client;
let db: PgClient;

beforeAll(async () => {
  service = await startTestService();
  api = client(service.url);
  db = new PgClient({ connectionString: service.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db.end();
  await service.close();
});

const fixtures = path.join(__dirname, '..', 'fixtures', 'images');

type User = Awaited<ReturnType<typeof newUser>>;

const createToken = (user: User, key: string, name: string) =>
  api.post('/api/tokens/', { token: user.token, json: { name }, headers: { 'Idempotency-Key': key } });

/** What the client sees of a response, without the per-request headers (request id, rate limits). */
const seen = (res: ApiResponse) => ({
  status: res.status,
  body: res.body,
  position: res.headers.get('x-event-position'),
});

async function tokenNames(user: User): Promise<string[]> {
  const listed = await api.get('/api/tokens/', { token: user.token });
  return listed.body.map((t: { name: string }) => t.name);
}

async function issuedEvents(user: User): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM event_store.events
      WHERE stream_name = $1 AND event_type = 'AccessTokenIssued' AND data->>'kind' = 'personal'`,
    [`user-${user.id}`],
  );
  return rows[0]!.n;
}

describe('Idempotency-Key', () => {
  test('the same key and body again replays the first response; only one token exists', async () => {
    const user = await newUser(api);
    const key = randomUUID();
    const first = await createToken(user, key, 'ci runner');
    const again = await createToken(user, key, 'ci runner');
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(seen(again)).toEqual(seen(first));
    expect(first.headers.get('x-event-position')).toMatch(/^\d+\.\d+$/);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await tokenNames(user)).toEqual(['ci runner']);
    expect(await issuedEvents(user)).toBe(1);
    // The replayed secret is the real one: it authenticates.
    expect((await api.get('/api/auth/me/', { token: again.body.token, scheme: 'Bearer' })).status).toBe(200);
  });

  test('the same key with another body, method or path is 422 and changes nothing', async () => {
    const user = await newUser(api);
    const key = randomUUID();
    expect((await createToken(user, key, 'laptop')).status).toBe(201);
    const otherBody = await createToken(user, key, 'desktop');
    expect(otherBody.status).toBe(422);
    expect(otherBody.body).toEqual({ detail: expect.stringMatching(/Idempotency-Key/) });
    const otherRoute = await api.patch('/api/profile/', {
      token: user.token,
      json: { bio: 'x' },
      headers: { 'Idempotency-Key': key },
    });
    expect(otherRoute.status).toBe(422);
    expect(await tokenNames(user)).toEqual(['laptop']);
    expect((await api.get('/api/profile/', { token: user.token })).body.bio).toBe('');
  });

  test('keys are per user: two users with one key both execute', async () => {
    const [ada, ben] = [await newUser(api), await newUser(api)];
    const key = randomUUID();
    const [a, b] = [await createToken(ada, key, 'shared name'), await createToken(ben, key, 'shared name')];
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.id).not.toBe(b.body.id);
    expect(await tokenNames(ada)).toEqual(['shared name']);
    expect(await tokenNames(ben)).toEqual(['shared name']);
  });

  test('20 concurrent requests with one key have exactly one effect, and all get its response', async () => {
    const user = await newUser(api);
    const key = randomUUID();
    const responses = await Promise.all(Array.from({ length: 20 }, () => createToken(user, key, 'burst')));
    expect(responses.map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 201));
    expect(new Set(responses.map((r) => JSON.stringify(seen(r)))).size).toBe(1);
    expect(responses.filter((r) => r.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    expect(await tokenNames(user)).toEqual(['burst']);
    expect(await issuedEvents(user)).toBe(1);
  });

  test('a key older than 24 hours is forgotten: the request runs again', async () => {
    const user = await newUser(api);
    const key = randomUUID();
    const first = await createToken(user, key, 'nightly');
    await db.query(
      `UPDATE idempotency.requests SET created_at = now() - interval '24 hours 1 minute' WHERE key_hash = $1`,
      [deriveRecordKeys(`user:${user.id}`, key).lookup],
    );
    const later = await createToken(user, key, 'nightly');
    expect(later.status).toBe(201);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect(later.body.id).not.toBe(first.body.id);
    expect(await tokenNames(user)).toEqual(['nightly', 'nightly']);
    // And the new execution is what the key replays from now on.
    expect(seen(await createToken(user, key, 'nightly'))).toEqual(seen(later));
  });

  test('a 4xx is not recorded: the corrected request with the same key executes', async () => {
    const user = await newUser(api);
    const key = randomUUID();
    const past = await api.post('/api/tokens/', {
      token: user.token,
      json: { name: 'late', expires_at: '2020-01-01T00:00:00Z' },
      headers: { 'Idempotency-Key': key },
    });
    expect(past.status).toBe(400);
    const { rows } = await db.query('SELECT 1 FROM idempotency.requests WHERE key_hash = $1', [
      deriveRecordKeys(`user:${user.id}`, key).lookup,
    ]);
    expect(rows).toEqual([]);
    const fixed = await createToken(user, key, 'late');
    expect(fixed.status).toBe(201);
    expect(await tokenNames(user)).toEqual(['late']);
  });

  test('an invalid key is 400 and nothing runs', async () => {
    const user = await newUser(api);
    for (const key of ['', 'k'.repeat(256), 'caf\u00e9', 'tab\there']) {
      const res = await createToken(user, key, 'never');
      expect({ key, status: res.status, body: res.body }).toEqual({
        key,
        status: 400,
        body: { detail: 'Idempotency-Key must be 1 to 255 printable ASCII characters.' },
      });
    }
    expect((await createToken(user, 'k'.repeat(255), 'longest key')).status).toBe(201);
    expect(await tokenNames(user)).toEqual(['longest key']);
  });

  test('replays keep the headers that matter: ETag of a profile update, 204 of a revocation', async () => {
    const user = await newUser(api);
    const patchKey = randomUUID();
    const patch = () =>
      api.patch('/api/profile/', {
        token: user.token,
        json: { bio: 'Golgi stain' },
        headers: { 'Idempotency-Key': patchKey },
      });
    const first = await patch();
    await api.patch('/api/profile/', { token: user.token, json: { location: 'Pavia' } }); // moves the ETag on
    const again = await patch();
    expect(seen(again)).toEqual(seen(first));
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));

    const token = await createToken(user, randomUUID(), 'to revoke');
    const revokeKey = randomUUID();
    const revoke = () =>
      api.delete(`/api/tokens/${token.body.id}/`, {
        token: user.token,
        headers: { 'Idempotency-Key': revokeKey },
      });
    const revoked = await revoke();
    const repeated = await revoke();
    expect(revoked.status).toBe(204);
    expect(seen(repeated)).toEqual(seen(revoked));
    expect(repeated.headers.get('idempotent-replayed')).toBe('true');
  });

  test('anonymous writes (registration) are keyed by the key alone', async () => {
    const key = randomUUID();
    const n = randomUUID().slice(0, 8);
    const registration = {
      email: `idem${n}@example.org`,
      username: `idem${n}`,
      password: 'correct-horse-battery',
      password_confirm: 'correct-horse-battery',
      first_name: 'Camillo',
      last_name: 'Golgi',
    };
    const register = (json: object) =>
      api.post('/api/auth/register/', { json, headers: { 'Idempotency-Key': key } });
    const first = await register(registration);
    const again = await register(registration);
    expect(first.status).toBe(201);
    expect(seen(again)).toEqual(seen(first));
    const other = await register({ ...registration, username: `other${n}` });
    expect(other.status).toBe(422);
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM event_store.events WHERE event_type = 'UserRegistered'
          AND data->>'email' = $1`,
      [registration.email],
    );
    expect(rows[0]!.n).toBe(1);
  });

  test('multipart: a retry with a new boundary replays; another avatar is 422', async () => {
    const user = await newUser(api);
    const key = randomUUID();
    const png = readFileSync(path.join(fixtures, 'sample.png'));
    const jpeg = readFileSync(path.join(fixtures, 'sample.jpg'));
    const upload = (bytes: Buffer, type: string) => {
      const form = new FormData(); // fetch picks a fresh random boundary for every request
      form.append('bio', 'with a face');
      form.append('avatar', new Blob([bytes], { type }), type === 'image/png' ? 'me.png' : 'me.jpg');
      return api.patch('/api/profile/', {
        token: user.token,
        body: form,
        headers: { 'Idempotency-Key': key },
      });
    };
    const first = await upload(png, 'image/png');
    expect(first.status).toBe(200);
    const again = await upload(png, 'image/png');
    expect(seen(again)).toEqual(seen(first));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await fetch(first.body.avatar)).status).toBe(200);
    const other = await upload(jpeg, 'image/jpeg');
    expect(other.status).toBe(422);
    expect((await api.get('/api/profile/', { token: user.token })).body.avatar).toBe(first.body.avatar);
  });

  test('the OpenAPI document gives every write the header, its 409 and 422, and the EventStoreDB caveat', async () => {
    const schema = (await api.get('/api/schema/')).body;
    const parameter = schema.components.parameters.IdempotencyKey;
    expect(parameter).toMatchObject({ name: 'Idempotency-Key', in: 'header', required: false });
    expect(parameter.description).toMatch(/EventStoreDB/);
    const operations = Object.values(schema.paths).flatMap((item: any) => Object.entries(item));
    const writes = operations.filter(([method]) => ['post', 'put', 'patch', 'delete'].includes(method));
    expect(writes.length).toBeGreaterThanOrEqual(7);
    for (const [, operation] of writes as [string, any][]) {
      expect(operation.parameters).toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
      expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['409', '422']));
    }
    for (const [, operation] of operations.filter(([method]) => method === 'get') as [string, any][])
      expect(operation.parameters ?? []).not.toContainEqual({
        $ref: '#/components/parameters/IdempotencyKey',
      });
  });
});
