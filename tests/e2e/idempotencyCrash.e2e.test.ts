import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { hashTokenSecret } from '#shared/auth/tokens';
import { client, newUser } from '#tests/support/httpClient';
import { spawnedServiceEnv } from '#tests/support/serviceEnv';
import { spawnAllInOne, type ServiceProcess } from '#tests/support/spawnService';

/**
 * The response to a write can be lost to a crash after its effect is durable. A retry with the same
 * Idempotency-Key must then get that response, and the effect must exist once. The service runs as
 * a child process with the test-only FAULT_INJECT_CRASH_AFTER_COMMIT, which makes it SIGKILL itself
 * right after a keyed write commits, before it answers. The flag stays on after the restart: a
 * replay that ran the request again would crash again.
 */
let service: ServiceProcess | undefined;
let db: PgClient | undefined;
const dataDir = mkdtempSync(path.join(tmpdir(), 'catalogue-idem-crash-'));

afterAll(async () => {
  await service?.kill();
  await db?.end();
  rmSync(dataDir, { recursive: true, force: true });
});

function serviceEnv(): Promise<Record<string, string>> {
  return spawnedServiceEnv('idem_crash', dataDir, { FAULT_INJECT_CRASH_AFTER_COMMIT: '1' });
}

/** The request whose answer never comes: the process dies first. */
async function lostToCrash(request: Promise<unknown>): Promise<void> {
  await expect(request).rejects.toThrow(/fetch failed/);
  await service!.kill(); // already dead; resolves once the exit is seen
}

async function countEvents(type: string, where: string, value: string): Promise<number> {
  const { rows } = await db!.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM event_store.events WHERE event_type = $1 AND ${where} = $2`,
    [type, value],
  );
  return rows[0]!.n;
}

test('a write whose response was lost to SIGKILL after commit is replayed on retry, with one effect', async () => {
  const env = await serviceEnv();
  service = await spawnAllInOne(env);
  db = new PgClient({ connectionString: env.DATABASE_URL });
  await db.connect();
  let api = client(service.url);
  const user = await newUser(api); // writes without a key are not affected by the fault hook

  const tokenKey = randomUUID();
  const createToken = () =>
    api.post('/api/tokens/', {
      token: user.token,
      json: { name: 'deploy bot' },
      headers: { 'Idempotency-Key': tokenKey },
    });
  await lostToCrash(createToken());

  service = await spawnAllInOne(env);
  api = client(service.url);
  const retried = await createToken();
  expect(retried.status).toBe(201);
  expect(retried.headers.get('idempotent-replayed')).toBe('true');
  // The replay is the first attempt's response: the token and position the crashed process committed.
  const { rows } = await db.query<{ data: { tokenId: string; tokenHash: string }; position: string }>(
    `SELECT data, transaction_id || '.' || global_position AS position FROM event_store.events
      WHERE stream_name = $1 AND event_type = 'AccessTokenIssued' AND data->>'kind' = 'personal'`,
    [`user-${user.id}`],
  );
  expect(rows).toHaveLength(1);
  expect(retried.body.id).toBe(rows[0]!.data.tokenId);
  expect(hashTokenSecret(retried.body.token)).toBe(rows[0]!.data.tokenHash);
  expect(retried.headers.get('x-event-position')).toBe(rows[0]!.position);
  const listed = await api.get('/api/tokens/', { token: user.token });
  expect(listed.body.map((t: { id: string }) => t.id)).toEqual([retried.body.id]);

  // A registration appends to four streams (id sequence, two reservations, the user): all or none.
  const n = randomUUID().slice(0, 8);
  const registration = {
    email: `crash${n}@example.org`,
    username: `crash${n}`,
    password: 'correct-horse-battery',
    password_confirm: 'correct-horse-battery',
    first_name: 'Rita',
    last_name: 'Levi-Montalcini',
  };
  const registerKey = randomUUID();
  const register = () =>
    api.post('/api/auth/register/', { json: registration, headers: { 'Idempotency-Key': registerKey } });
  await lostToCrash(register());

  service = await spawnAllInOne(env);
  api = client(service.url);
  const registered = await register();
  expect(registered.status).toBe(201);
  expect(registered.headers.get('idempotent-replayed')).toBe('true');
  expect(registered.body).toMatchObject({ email: registration.email, username: registration.username });
  expect(await countEvents('UserRegistered', "data->>'email'", registration.email)).toBe(1);
  expect(await countEvents('IdAllocated', "data->>'id'", String(registered.body.id))).toBe(1);
  const login = await api.post('/api/auth/login/', {
    json: { email: registration.email, password: registration.password },
  });
  expect(login.status).toBe(200);
  expect(login.body.user.id).toBe(registered.body.id);
}, 120_000);
