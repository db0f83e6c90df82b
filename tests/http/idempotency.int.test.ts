import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { ValidationError } from '#shared/errors/httpErrors';
import { UnitOfWorkConflictError, type NewEvent } from '#shared/eventStore/eventStore';
import {
  createPostgresEventStore,
  type PostgresEventStore,
} from '#shared/eventStore/postgres/postgresEventStore';
import { createApiApp } from '#shared/http/createApiApp';
import { createIdempotency, type IdempotencyOptions } from '#shared/http/idempotency/createIdempotency';
import { deriveRecordKeys } from '#shared/http/idempotency/recordKeys';
import type { RouteSpec } from '#shared/http/routeSpec';
import { createSilentLogger } from '#shared/logging/logger';
import { createMetrics } from '#shared/metrics/metrics';
import { createTestDatabase } from '#tests/support/testPostgres';
import { waitFor } from '#tests/support/waitFor';
import { fakeAuthenticator } from './support/demoRoutes';
import { type Listening, listen } from './support/listen';

/**
 * Both ways of honouring Idempotency-Key, on a real PostgreSQL behind a real API app: the unit of
 * work (effect and record in one transaction) and the claim-then-record fallback for event stores
 * without one. A counter route appends one event per execution, so executions can be counted.
 */
let connectionString: string;
let store: PostgresEventStore;
let admin: pg.Pool;

beforeAll(async () => {
  connectionString = await createTestDatabase('idempotency');
  store = createPostgresEventStore({ connectionString, schema: `es_${randomBytes(4).toString('hex')}` });
  await store.migrate();
  admin = new pg.Pool({ connectionString, max: 2 });
});
afterAll(async () => {
  await store.close();
  await admin.end();
});

const counted = (): NewEvent => ({
  id: randomUUID(),
  type: 'Counted',
  data: {},
  metadata: { actor: 'test', requestId: null, correlationId: 'c', causationId: null, schemaVersion: 1 },
});

interface Behaviour {
  /** Resolved by the test to let a held execution finish. */
  gate?: Promise<void>;
  /** Fail after appending (a handler that throws after its effect). */
  failAfterAppend?: boolean;
  /** Fail with "run the unit again" this many times first. */
  conflicts?: number;
}

function counterRoute(behaviours: Map<string, Behaviour>, calls: Map<string, number>): RouteSpec {
  return {
    method: 'post',
    path: '/api/counters/{name}/',
    operationId: 'count',
    summary: 'Count',
    tags: ['test'],
    auth: 'public',
    body: { type: 'object', properties: { note: { type: 'string' } } },
    responses: { 201: { description: 'Counted' } },
    async handler(ctx) {
      const name = ctx.params.name!;
      calls.set(name, (calls.get(name) ?? 0) + 1);
      const behaviour = behaviours.get(name) ?? {};
      if (behaviour.conflicts) {
        behaviour.conflicts--;
        throw new UnitOfWorkConflictError('provoked by the test');
      }
      await behaviour.gate;
      const result = await store.appendToStream(`counter-${name}`, [counted()]);
      if (behaviour.failAfterAppend) throw ValidationError.field('note', 'Refused after the effect.');
      const events = (await store.readStream(`counter-${name}`)).length;
      return {
        status: 201,
        body: { name, events, id: randomUUID() },
        headers: { Location: `/api/counters/${name}/` },
        position: result.position,
      };
    },
  };
}

interface Harness extends Listening {
  readonly behaviours: Map<string, Behaviour>;
  readonly calls: Map<string, number>;
  count(name: string, key: string, note?: string): Promise<{ status: number; body: any; headers: Headers }>;
  storedEvents(name: string): Promise<number>;
}

async function startHarness(options: IdempotencyOptions): Promise<Harness> {
  const behaviours = new Map<string, Behaviour>();
  const calls = new Map<string, number>();
  const idempotency = createIdempotency(options);
  await idempotency.ensureSchema();
  const app = createApiApp({
    serviceName: 'idempotency-test',
    routes: [counterRoute(behaviours, calls)],
    authenticator: fakeAuthenticator,
    metrics: createMetrics('idempotency-test'),
    logger: createSilentLogger(),
    idempotency,
  });
  const listening = await listen(app);
  return {
    ...listening,
    behaviours,
    calls,
    async count(name, key, note = 'n') {
      const res = await fetch(`${listening.url}/api/counters/${name}/`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
        body: JSON.stringify({ note }),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
    },
    async storedEvents(name) {
      return (await store.readStream(`counter-${name}`)).length;
    },
  };
}

const gated = (): { gate: Promise<void>; open: () => void } => {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  return { gate, open };
};

/** A keyed request whose handler is held at its gate; resolves once the handler has started. */
async function heldRequest(harness: Harness) {
  const name = randomUUID();
  const key = randomUUID();
  const { gate, open } = gated();
  harness.behaviours.set(name, { gate });
  const first = harness.count(name, key);
  await waitFor('the handler to have run once', () => harness.calls.get(name) === 1);
  return { name, key, first, open };
}

const strategies: [string, () => IdempotencyOptions][] = [
  ['unit of work', () => ({ unitOfWork: store.unitOfWork, inProgressWaitMs: 1500 })],
  ['claim then record (no unit of work)', () => ({ pool: store.pool, inProgressWaitMs: 1500 })],
];

describe.each(strategies)('Idempotency-Key, %s', (_, options) => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness(options());
  });
  afterAll(() => harness.close());

  test('a repeat replays status, body and Location without a second execution', async () => {
    const name = randomUUID();
    const key = randomUUID();
    const first = await harness.count(name, key);
    const again = await harness.count(name, key);
    expect(first.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('location')).toBe(`/api/counters/${name}/`);
    expect(again.headers.get('x-event-position')).toBe(first.headers.get('x-event-position'));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(harness.calls.get(name)).toBe(1);
    expect(await harness.storedEvents(name)).toBe(1);
    expect((await harness.count(name, key, 'other note')).status).toBe(422);
  });

  test('duplicates arriving while the first runs wait for it and replay it', async () => {
    const { name, key, first, open } = await heldRequest(harness);
    const duplicates = Array.from({ length: 5 }, () => harness.count(name, key));
    await new Promise((resolve) => setTimeout(resolve, 100));
    open();
    const responses = await Promise.all([first, ...duplicates]);
    expect(responses.map((r) => r.status)).toEqual([201, 201, 201, 201, 201, 201]);
    expect(new Set(responses.map((r) => JSON.stringify(r.body))).size).toBe(1);
    expect(await harness.storedEvents(name)).toBe(1);
    // The fallback's claim keeps duplicates out of the handler. Under the unit of work a duplicate
    // may start the handler, but its first statement waits for the key's lock, finds the record,
    // and its unit rolls back: effects happen once either way.
    if (!options().unitOfWork) expect(harness.calls.get(name)).toBe(1);
  });

  test('an error is not recorded: the retry executes again', async () => {
    const name = randomUUID();
    const key = randomUUID();
    harness.behaviours.set(name, { failAfterAppend: true });
    expect((await harness.count(name, key)).status).toBe(400);
    harness.behaviours.set(name, {});
    const retried = await harness.count(name, key);
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(harness.calls.get(name)).toBe(2);
    // Atomic: the failed attempt's append rolled back. The fallback cannot undo it (documented).
    expect(await harness.storedEvents(name)).toBe(options().unitOfWork ? 1 : 2);
  });
});

test('unit of work: a lock holder in another transaction makes the duplicate wait, then 409 past the bound', async () => {
  const harness = await startHarness({ unitOfWork: store.unitOfWork, inProgressWaitMs: 300 });
  const holder = await admin.connect();
  try {
    const name = randomUUID();
    const key = randomUUID();
    // Another instance executing this key right now: it holds the key's lock in its transaction.
    await holder.query('BEGIN');
    await holder.query('SELECT pg_advisory_xact_lock($1)', [
      deriveRecordKeys('anonymous', key).lockId.toString(),
    ]);
    const busy = await harness.count(name, key);
    expect(busy.status).toBe(409);
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(await harness.storedEvents(name)).toBe(0); // its append was rolled back
    await holder.query('COMMIT');
    expect((await harness.count(name, key)).status).toBe(201);
    expect(await harness.storedEvents(name)).toBe(1);
  } finally {
    holder.release();
    await harness.close();
  }
});

test('unit of work: a transaction PostgreSQL asks to retry is run again, invisibly to the client', async () => {
  const harness = await startHarness({ unitOfWork: store.unitOfWork });
  try {
    const name = randomUUID();
    harness.behaviours.set(name, { conflicts: 2 });
    const res = await harness.count(name, randomUUID());
    expect(res.status).toBe(201);
    expect(harness.calls.get(name)).toBe(3);
    expect(await harness.storedEvents(name)).toBe(1);
  } finally {
    await harness.close();
  }
});

test('fallback: a duplicate that waited longer than the bound for the running request gets 409 with Retry-After', async () => {
  const harness = await startHarness({ pool: store.pool, inProgressWaitMs: 300 });
  try {
    const { name, key, first, open } = await heldRequest(harness);
    const busy = await harness.count(name, key);
    open();
    expect(busy.status).toBe(409);
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(busy.body).toEqual({ detail: expect.stringMatching(/in progress/) });
    expect((await first).status).toBe(201);
    expect((await harness.count(name, key)).headers.get('idempotent-replayed')).toBe('true');
    expect(harness.calls.get(name)).toBe(1);
  } finally {
    await harness.close();
  }
});

test('fallback: a claim left by a process that died is in progress until stale, then taken over', async () => {
  const harness = await startHarness({ pool: store.pool, inProgressWaitMs: 200, staleClaimMs: 60_000 });
  try {
    const name = randomUUID();
    const key = randomUUID();
    const { lookup } = deriveRecordKeys('anonymous', key);
    await admin.query(`INSERT INTO idempotency.requests (key_hash, state) VALUES ($1, 'pending')`, [lookup]);
    expect((await harness.count(name, key)).status).toBe(409);
    expect(harness.calls.get(name)).toBeUndefined();
    await admin.query(
      `UPDATE idempotency.requests SET created_at = now() - interval '61 seconds' WHERE key_hash = $1`,
      [lookup],
    );
    expect((await harness.count(name, key)).status).toBe(201);
    expect(harness.calls.get(name)).toBe(1);
  } finally {
    await harness.close();
  }
});
