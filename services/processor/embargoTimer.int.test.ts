import { randomUUID } from 'node:crypto';
import {
  type PostgresEventStore,
  createPostgresEventStore,
} from '#shared/eventStore/postgres/postgresEventStore';
import { createLogger } from '#shared/logging/logger';
import { eventStoreDatabase } from '#tests/support/eventStoreDatabase';
import { waitFor } from '#tests/support/waitFor';
import { type RunningEmbargoTimer, startEmbargoTimer } from './embargoTimer';

/**
 * The embargo timer against the real PostgreSQL event store. The read model is a `brains` table
 * holding the columns the timer reads (the projector's own is tested with it elsewhere); no
 * projector runs, so the rows keep saying "embargoed" after the lift, as a lagging one would.
 * Each timer has its own event store connection, so that two of them race in the database (one
 * store would make its writers take turns in-process).
 */
const db = eventStoreDatabase('embargo_timer');
const timers: RunningEmbargoTimer[] = [];
const stores: PostgresEventStore[] = [];
afterEach(async () => {
  await Promise.all(timers.splice(0).map((timer) => timer.stop()));
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

const logger = createLogger({ service: 'embargo-timer-test', level: 'silent' });

function timer(pollMs?: number): RunningEmbargoTimer {
  const store = createPostgresEventStore({ connectionString: db.url });
  stores.push(store);
  const running = startEmbargoTimer({
    store,
    pool: db.pool,
    logger,
    pollMs,
    backoff: { initialMs: 10, maxMs: 50 },
  });
  timers.push(running);
  return running;
}

const METADATA = { actor: '1', requestId: null, correlationId: 'c', causationId: null, schemaVersion: 1 };
let nextId = 1;

/** A brain created with this visibility, in its stream and in the read model's table. */
async function brain(visibility: string, embargoUntil: Date | null): Promise<number> {
  const brainId = nextId++;
  const until = embargoUntil?.toISOString() ?? null;
  await db.store.appendToStream(`brain-${brainId}`, [
    {
      id: randomUUID(),
      type: 'BrainCreated',
      data: {
        brainId,
        readableId: `scan-${brainId}`,
        uuid: randomUUID(),
        name: 'scan',
        description: '',
        atlasId: null,
        speciesId: null,
        categoryId: 1,
        isReference: false,
        extraLink: '',
        website: '',
        color: '',
        verified: false,
        visibility,
        embargoUntil: until,
        uploaderId: 1,
        fileUploadId: null,
        createdAt: new Date().toISOString(),
      },
      metadata: METADATA,
    },
  ]);
  await db.pool.query('INSERT INTO brains (id, visibility, embargo_until) VALUES ($1, $2, $3)', [
    brainId,
    visibility,
    until,
  ]);
  return brainId;
}

const brainsTable = () =>
  db.pool.query(
    'CREATE TABLE IF NOT EXISTS brains (id integer PRIMARY KEY, visibility text NOT NULL, embargo_until timestamptz)',
  );

const lifts = async (brainId: number) =>
  (await db.store.readStream(`brain-${brainId}`)).filter((event) => event.type === 'EmbargoLifted');

test('before the projector has made its tables, the timer is up and lifts nothing', async () => {
  await db.pool.query('DROP TABLE IF EXISTS brains');
  const running = timer(50);
  await waitFor('the timer up', () => running.loop.status().state === 'up');
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(running.loop.status().state).toBe('up');
  await expect(running.healthCheck()).resolves.toBe('up');
});

test('two timers at once: every ended embargo lifted exactly once, at or after its end; nothing else', async () => {
  await brainsTable();
  const soon = new Date(Date.now() + 1500);
  const ending = await Promise.all(Array.from({ length: 6 }, () => brain('embargoed', soon)));
  const ended = await brain('embargoed', new Date(Date.now() - 60_000));
  const later = await brain('embargoed', new Date(Date.now() + 3_600_000));
  const hidden = await brain('private', null);
  const open = await brain('public', null);
  // The default poll (5 s): the timers sleep until the next end, not a poll period.
  timer();
  timer();
  for (const brainId of [ended, ...ending])
    await waitFor(`brain ${brainId} lifted`, async () => (await lifts(brainId)).length > 0);
  // Both timers keep seeing the rows as embargoed (no projector): they must not lift again.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  for (const brainId of [ended, ...ending]) {
    const events = await lifts(brainId);
    expect(events).toHaveLength(1);
    const data = events[0]!.data as { embargoUntil: string; liftedAt: string };
    expect(Date.parse(data.liftedAt)).toBeGreaterThanOrEqual(Date.parse(data.embargoUntil));
    expect(events[0]!.metadata.actor).toBe('system');
  }
  for (const brainId of [later, hidden, open]) expect(await lifts(brainId)).toEqual([]);
});

test('a database outage: the health check fails, and the timer lifts again once it is back', async () => {
  await brainsTable();
  const running = timer(50);
  await waitFor('the timer up', () => running.loop.status().state === 'up');
  await db.pool.query('ALTER TABLE brains RENAME TO brains_away');
  try {
    // A table that vanishes under the timer is not "no tables yet": an undefined table is, though,
    // so the outage is made by a column the query reads.
    await db.pool.query('CREATE TABLE brains (id integer PRIMARY KEY, visibility text NOT NULL)');
    await waitFor('the timer retrying', () => running.loop.status().state === 'retrying');
    await expect(running.healthCheck()).rejects.toThrow(/embargo_until/);
  } finally {
    await db.pool.query('DROP TABLE IF EXISTS brains');
    await db.pool.query('ALTER TABLE brains_away RENAME TO brains');
  }
  const brainId = await brain('embargoed', new Date(Date.now() + 300));
  await waitFor('the timer up again', () => running.loop.status().state === 'up');
  await waitFor(`brain ${brainId} lifted`, async () => (await lifts(brainId)).length === 1);
});
