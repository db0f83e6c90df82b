import { randomUUID } from 'node:crypto';
import pg from 'pg';
import {
  createPostgresEventStore,
  type PostgresEventStore,
} from '#shared/eventStore/postgres/postgresEventStore';
import { GENESIS_HASH, chainHash } from '#shared/audit/ledgerChain';
import { recordLedgerVerification } from '#shared/audit/ledgerVerifications';
import { formatPosition } from '#shared/eventStore/eventStore';
import { verifyLedger } from '#services/projector/verifyLedger';
import { type Client, newUser } from '#tests/support/httpClient';
import { checkMetrics } from '#tests/support/promtool';
import { startCuratedService } from '#tests/support/curatedService';
import type { TestService } from '#tests/support/testService';
import { waitFor } from '#tests/support/waitFor';
import { brainForm, createTaxonomy, fresh, nifti } from '#tests/e2e/brains/brainFixtures';

/**
 * The ledger over real traffic: 8 writers at once register, take tokens, create and rename brains
 * and revoke tokens; the head the route answers is the chain recomputed from the events, and
 * verify-ledger passes clean. The processor is off, so once the writers are done nothing else
 * appends (but a token's first use of the minute, which each request's token already made).
 */
const WRITERS = 8;
let service: TestService;
let api: Client;
let staff: string;
let user: { token: string } | undefined;
let store: PostgresEventStore;
let pool: pg.Pool;

interface LedgerAnswer {
  readonly position: string | null;
  readonly count: number;
  readonly hash: string;
  readonly algorithm: string;
}

beforeAll(async () => {
  ({ service, api, staff } = await startCuratedService({ PROCESSOR_ENABLED: 'false' }));
  store = createPostgresEventStore({ connectionString: service.databaseUrl, poolSize: 2 });
  pool = new pg.Pool({ connectionString: service.databaseUrl, max: 2 });
  const place = await createTaxonomy(api, staff);
  const writers = Array.from({ length: WRITERS }, async (_, i) => {
    const writer = await newUser(api);
    const token = await api.post('/api/tokens/', { token: writer.token, json: { name: `cli ${i}` } });
    expect(token.status).toBe(201);
    for (let b = 0; b < 2; b++) {
      const brain = await api.post('/api/brains/', {
        token: token.body.token as string,
        body: brainForm({ name: fresh(`Ledger ${i}.${b} `), atlas: place.atlas.id }, nifti()),
      });
      expect(brain.status).toBe(201);
      const written = await api.patch(`/api/brains/${brain.body.id}/`, {
        token: writer.token,
        json: { name: fresh('Renamed ') },
      });
      expect(written.status).toBe(200);
    }
    expect((await api.delete(`/api/tokens/${token.body.id}/`, { token: writer.token })).status).toBe(204);
    return writer;
  });
  [user] = await Promise.all(writers);
});

afterAll(async () => {
  await store?.close();
  await pool?.end();
  await service?.close();
});

const ledger = async (): Promise<LedgerAnswer> => {
  const res = await api.get('/api/audit/ledger/', { token: staff });
  expect(res.status).toBe(200);
  return res.body as LedgerAnswer;
};

const storeCount = async (): Promise<number> =>
  Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM event_store.events')).rows[0]!.n);

/** The ledger once it holds every event and two reads a moment apart agree (nothing appends). */
const settledLedger = (): Promise<LedgerAnswer> =>
  waitFor(
    'the ledger to chain every event and stay put',
    async () => {
      const first = await ledger();
      await new Promise((r) => setTimeout(r, 200));
      const second = await ledger();
      return { first, second, events: await storeCount() };
    },
    {
      timeoutMs: 30_000,
      intervalMs: 200,
      until: ({ first, second, events }) => first.count === events && second.hash === first.hash,
    },
  ).then(({ second }) => second);

describe('GET /api/audit/ledger/', () => {
  test('anonymous: 401; a user who is not staff: 403', async () => {
    const anonymous = await api.get('/api/audit/ledger/');
    expect(anonymous.status).toBe(401);
    const other = await api.get('/api/audit/ledger/', { token: user!.token });
    expect(other.status).toBe(403);
    expect(other.body).toEqual({ detail: expect.any(String) });
  });

  test('staff: the newest chained event, the count of events, the chain hash in lowercase hex', async () => {
    const head = await settledLedger();
    expect(Object.keys(head).sort()).toEqual(['algorithm', 'count', 'hash', 'position']);
    expect(head.algorithm).toBe('sha256');
    expect(head.hash).toMatch(/^[0-9a-f]{64}$/);
    // Every write of the 8 writers (registration, tokens, brains, uploads, reservations, ids).
    expect(head.count).toBeGreaterThan(WRITERS * 10);
    const events = await store.readAll({ maxCount: 100_000 });
    expect(head.count).toBe(events.length);
    expect(head.position).toBe(formatPosition(events[events.length - 1]!.position));
    // What the chain recomputed from the stored events gives, in the order readers see.
    const recomputed = events.reduce((previous, event) => chainHash(previous, event), GENESIS_HASH);
    expect(head.hash).toBe(recomputed.toString('hex'));
  });

  test('a write moves the head to the position the write answered', async () => {
    const before = await settledLedger();
    const written = await api.post('/api/categories/', { token: staff, json: { name: fresh('ledger') } });
    expect(written.status).toBe(201);
    const after = await ledger();
    expect(after.position).toBe(written.headers.get('x-event-position'));
    expect(after.count).toBeGreaterThan(before.count);
    expect(after.hash).not.toBe(before.hash);
  });
});

describe('verify-ledger over the traffic of 8 writers', () => {
  test('passes clean, at the head the route answers', async () => {
    const head = await settledLedger();
    const result = await verifyLedger({ store, pool });
    expect(result).toMatchObject({ ok: true, fault: undefined, newerEvents: 0, eventsChecked: head.count });
    expect({
      position: result.head.position,
      count: result.head.count,
      hash: result.head.hash.toString('hex'),
    }).toEqual({
      position: head.position,
      count: head.count,
      hash: head.hash,
    });
    expect(result.message).toBe(`ledger verified: ${head.count} events, head ${head.position} ${head.hash}`);
  });
});

describe('/metrics/ of the all-in-one', () => {
  const scrape = async (): Promise<string> => {
    const res = await api.get('/metrics/');
    expect(res.status).toBe(200);
    return res.text;
  };
  const value = (exposition: string, name: string): number | undefined => {
    const line = exposition.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
    return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
  };

  test('show the ledger head, no lag once caught up, and no verification yet; promtool accepts them', async () => {
    const head = await settledLedger();
    const exposition = await scrape();
    expect(value(exposition, 'ledger_head_seq')).toBe(head.count);
    expect(value(exposition, 'ledger_lag_events')).toBe(0);
    expect(value(exposition, 'ledger_verification_last_success')).toBe(0);
    expect(value(exposition, 'ledger_verification_last_run_timestamp_seconds')).toBe(0);
    for (const family of [
      'ledger_head_seq gauge',
      'ledger_lag_events gauge',
      'ledger_verification_last_success gauge',
      'ledger_verification_last_run_timestamp_seconds gauge',
    ])
      expect(exposition).toContain(`# TYPE ${family}`);
    expect(await checkMetrics(exposition)).toEqual([]);
  });

  test('show the latest recorded verification: its outcome and when it finished', async () => {
    const finishedAt = new Date('2026-05-06T07:08:09.000Z');
    await recordLedgerVerification(pool, {
      startedAt: new Date(finishedAt.getTime() - 1000),
      finishedAt,
      ok: true,
      eventsChecked: 10,
      firstBadPosition: null,
      message: 'ledger verified',
    });
    // Readings are kept for a second within one scrape's gauges; a later scrape reads again.
    const exposition = await waitFor('the recorded run on /metrics/', scrape, {
      timeoutMs: 10_000,
      intervalMs: 300,
      until: (text) => value(text, 'ledger_verification_last_success') === 1,
    });
    expect(value(exposition, 'ledger_verification_last_run_timestamp_seconds')).toBe(
      finishedAt.getTime() / 1000,
    );
    await recordLedgerVerification(pool, {
      startedAt: finishedAt,
      finishedAt: new Date(finishedAt.getTime() + 5000),
      ok: false,
      eventsChecked: 3,
      firstBadPosition: '1.2',
      message: 'event altered',
    });
    const failed = await waitFor('the failed run on /metrics/', scrape, {
      timeoutMs: 10_000,
      intervalMs: 300,
      until: (text) => value(text, 'ledger_verification_last_success') === 0,
    });
    expect(value(failed, 'ledger_verification_last_run_timestamp_seconds')).toBe(
      finishedAt.getTime() / 1000 + 5,
    );
  });

  test('count events the ledger has not chained as lag', async () => {
    // The ledger is held back (the checkpoints locked, so the projector's batch waits) while two
    // events are appended.
    const head = await settledLedger();
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      // A table lock takes no transaction id, so it holds back no reader's visibility horizon.
      await client.query('LOCK TABLE rm.projection_checkpoints IN EXCLUSIVE MODE');
      const noted = () => ({
        id: randomUUID(),
        type: 'Noted',
        data: {},
        metadata: {
          actor: 'system',
          requestId: null,
          correlationId: randomUUID(),
          causationId: null,
          schemaVersion: 1,
        },
      });
      await store.appendToStream(`ledger-lag-${fresh('s')}`, [noted(), noted()]);
      const lagging = await waitFor('the lag on /metrics/', scrape, {
        timeoutMs: 10_000,
        intervalMs: 300,
        until: (text) => value(text, 'ledger_lag_events') === 2,
      });
      expect(value(lagging, 'ledger_head_seq')).toBe(head.count);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
    const caughtUp = await waitFor('the ledger to catch up on /metrics/', scrape, {
      timeoutMs: 20_000,
      intervalMs: 300,
      until: (text) => value(text, 'ledger_lag_events') === 0,
    });
    expect(value(caughtUp, 'ledger_head_seq')).toBe(head.count + 2);
  });
});
