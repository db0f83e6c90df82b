import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { createTestDatabase } from '#tests/support/testPostgres';
import { waitFor } from '#tests/support/waitFor';
import type { NewEvent, RecordedEvent } from '#shared/eventStore/eventStore';
import { AppendListener } from './appendListener';
import { migrations } from './migrations/migrations';
import { createPostgresEventStore, type PostgresEventStore } from './postgresEventStore';
import { subscribeToAll } from './subscribeToAll';

let connectionString: string;
let admin: pg.Client;
let store: PostgresEventStore;

const newEvent = (): NewEvent => ({
  id: randomUUID(),
  type: 'ThingHappened',
  data: {},
  metadata: {
    actor: 'system',
    requestId: null,
    correlationId: randomUUID(),
    causationId: null,
    schemaVersion: 1,
  },
});

const freshSchema = (): string => `es_${randomBytes(5).toString('hex')}`;

beforeAll(async () => {
  connectionString = await createTestDatabase('pg_event_store');
  admin = new pg.Client({ connectionString });
  await admin.connect();
});

afterAll(async () => {
  await admin.end();
});

beforeEach(async () => {
  store = createPostgresEventStore({ connectionString, schema: freshSchema() });
  await store.migrate();
});

afterEach(async () => {
  await store.close();
});

/** An open transaction that already has a transaction id: it holds back every reader while open. */
async function openTransaction(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  await client.query('BEGIN');
  await client.query('SELECT pg_current_xact_id()');
  return client;
}

async function listenerSessions(): Promise<number> {
  const { rows } = await admin.query<{ count: string }>(
    `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'`,
  );
  return Number(rows[0]?.count);
}

async function nextBatch(
  iterator: AsyncIterator<readonly RecordedEvent[]>,
): Promise<readonly RecordedEvent[]> {
  const next = await iterator.next();
  if (next.done) throw new Error('subscription ended');
  return next.value;
}

test('migrate is idempotent and safe when several processes run it at once', async () => {
  const schema = freshSchema();
  const stores = Array.from({ length: 5 }, () => createPostgresEventStore({ connectionString, schema }));
  try {
    await Promise.all(stores.map((s) => s.migrate()));
    await stores[0]!.migrate();
    const { rows } = await admin.query<{ version: number }>(
      `SELECT version FROM ${pg.escapeIdentifier(schema)}.schema_migrations ORDER BY version`,
    );
    expect(rows.map((row) => row.version)).toEqual(migrations.map((m) => m.version));
    await expect(stores[1]!.appendToStream('brain-1', [newEvent()])).resolves.toMatchObject({
      nextExpectedRevision: 0n,
    });
  } finally {
    await Promise.all(stores.map((s) => s.close()));
  }
});

test('events cannot be updated or deleted', async () => {
  await store.appendToStream('brain-1', [newEvent()]);
  await expect(store.pool.query(`UPDATE ${store.names.events} SET event_type = 'Changed'`)).rejects.toThrow(
    /immutable/,
  );
  await expect(store.pool.query(`DELETE FROM ${store.names.events}`)).rejects.toThrow(/immutable/);
  expect(await store.readStream('brain-1')).toHaveLength(1);
});

test('readAll hides a committed transaction while an older one is open, then returns both in transaction order', async () => {
  const older = await openTransaction();
  const heldEvent = newEvent();
  const held = await store.appendWithin(older, 'slow-1', [heldEvent]);
  const quick = await store.appendToStream('quick-1', [newEvent()]);
  expect(quick.position.prepare).toBeGreaterThan(held.position.prepare);

  expect(await store.readAll()).toEqual([]);
  expect(await store.readStream('quick-1')).toHaveLength(1); // the write side sees its own commit at once
  await older.query('COMMIT');
  await older.end();

  // The visibility horizon is cluster-wide: transactions of other test files (other databases on the
  // same server) hold it back too, so "visible after commit" is checked as "visible soon after".
  const all = await waitFor('both events to be readable', () => store.readAll(), {
    until: (events) => events.length === 2,
  });
  expect(all.map((event) => event.streamName)).toEqual(['slow-1', 'quick-1']);
  expect(all[0]!.position).toEqual(held.position);
});

/** Resolves with the promise's value, or rejects if it has not settled within a generous bound. */
async function settlesWithin<T>(promise: Promise<T>, what: string, boundMs = 15_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing after ${boundMs} ms`)), boundMs);
  });
  try {
    return await Promise.race([promise, bound]);
  } finally {
    clearTimeout(timer);
  }
}

/** Nothing but a NOTIFY or the held-back poll can wake this subscription within the test's bound. */
const HOUR_MS = 3_600_000;

test('an append wakes a waiting listener through NOTIFY', async () => {
  const listener = new AppendListener({ connectionString }, store.names);
  const controller = new AbortController();
  try {
    await listener.start();
    listener.reset();
    const woken = listener.wait(HOUR_MS, controller.signal); // only a notification can end this in time
    await store.appendToStream('live', [newEvent()]);
    await settlesWithin(woken, 'listener woken by NOTIFY');
  } finally {
    controller.abort();
    await listener.close();
  }
});

test("a listener ignores its own store's NOTIFY (its appends woke it already) and wakes on any other", async () => {
  const listener = new AppendListener({ connectionString }, store.names, 'own-origin');
  const controller = new AbortController();
  const notify = (payload: string) => admin.query('SELECT pg_notify($1, $2)', [store.names.channel, payload]);
  try {
    await listener.start();
    listener.reset();
    let woken = false;
    const waiting = listener.wait(HOUR_MS, controller.signal).then(() => (woken = true));
    await notify('own-origin');
    await sleep(300); // delivered by now, and ignored
    expect(woken).toBe(false);
    await notify('another-origin');
    await settlesWithin(waiting, 'listener woken by a NOTIFY of another store');
    for (const payload of ['', 'own-origin-but-longer']) {
      listener.reset();
      const next = listener.wait(HOUR_MS, controller.signal);
      await notify(payload);
      await settlesWithin(next, `listener woken by a NOTIFY with payload '${payload}'`);
    }
  } finally {
    controller.abort();
    await listener.close();
  }
});

test('appends in a unit of work wake a waiting listener once it commits, not before', async () => {
  const listener = new AppendListener({ connectionString }, store.names);
  const controller = new AbortController();
  try {
    await listener.start();
    listener.reset();
    let woken = false;
    const waiting = listener.wait(HOUR_MS, controller.signal).then(() => (woken = true));
    await store.unitOfWork.run(async () => {
      await store.appendToStream('unit-a', [newEvent()]);
      await store.appendToStream('unit-b', [newEvent()]);
      await sleep(200); // a notification sent now would have arrived by the end of this
      expect(woken).toBe(false);
    });
    await settlesWithin(waiting, 'listener woken after the commit');
    // Readable once no older transaction of the cluster is open (the test files share its xids).
    const all = await waitFor('both events to be readable', () => store.readAll(), {
      until: (events) => events.length === 2,
    });
    expect(all.map((event) => event.streamName)).toEqual(['unit-a', 'unit-b']);
  } finally {
    controller.abort();
    await listener.close();
  }
});

test('appendWithin wakes a waiting listener when the caller commits its transaction, not before', async () => {
  const listener = new AppendListener({ connectionString }, store.names);
  const controller = new AbortController();
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await listener.start();
    listener.reset();
    let woken = false;
    const waiting = listener.wait(HOUR_MS, controller.signal).then(() => (woken = true));
    await client.query('BEGIN');
    await store.appendWithin(client, 'within', [newEvent()]);
    await sleep(200);
    expect(woken).toBe(false);
    await client.query('COMMIT');
    await settlesWithin(waiting, 'listener woken by the commit of appendWithin');
  } finally {
    controller.abort();
    await listener.close();
    await client.end();
  }
});

test('events held back by a transaction that never notifies are found by the held-back poll', async () => {
  const controller = new AbortController();
  // An idle poll of an hour: only the held-back poll can deliver the event before the bound.
  const subscription = subscribeToAll(
    {
      pool: store.pool,
      names: store.names,
      listenerConfig: { connectionString },
      closing: controller.signal,
      idlePollMs: HOUR_MS,
    },
    { signal: controller.signal },
  );
  const iterator: AsyncIterator<readonly RecordedEvent[]> = subscription[Symbol.asyncIterator]();
  const blocker = await openTransaction(); // not an append: it will not NOTIFY when it ends
  try {
    const pending = nextBatch(iterator);
    await store.appendToStream('behind-blocker', [newEvent()]); // its NOTIFY comes while it is held back
    await sleep(100);
    await blocker.query('COMMIT');
    // Generous: the test server's snapshot horizon is shared by every test file's database, so another
    // file's open transaction can hold this event back too. Anything under the hour-long idle poll proves it.
    const batch = await settlesWithin(pending, 'held-back event delivered', 50_000);
    expect(batch.map((event) => event.streamName)).toEqual(['behind-blocker']);
  } finally {
    await blocker.end();
    controller.abort();
    await iterator.return?.();
  }
});

test('a subscription reconnects its LISTEN connection and releases it when aborted', async () => {
  const controller = new AbortController();
  const iterator = store.subscribeToAll({ signal: controller.signal })[Symbol.asyncIterator]();
  try {
    await store.appendToStream('before', [newEvent()]);
    await nextBatch(iterator);
    expect(await listenerSessions()).toBe(1);

    await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND query LIKE 'LISTEN %'`,
    );
    await store.appendToStream('after', [newEvent()]);
    expect((await nextBatch(iterator)).map((event) => event.streamName)).toEqual(['after']);
    await waitFor('the listener to reconnect', listenerSessions, { until: (sessions) => sessions === 1 });
    await store.appendToStream('reconnected', [newEvent()]);
    expect((await nextBatch(iterator)).map((event) => event.streamName)).toEqual(['reconnected']);

    controller.abort();
    await expect(iterator.next()).resolves.toMatchObject({ done: true });
    await waitFor('the listener to close', listenerSessions, { until: (sessions) => sessions === 0 });
  } finally {
    controller.abort();
    await iterator.return?.();
  }
});
