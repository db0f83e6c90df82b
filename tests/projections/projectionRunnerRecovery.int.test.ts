import pg from 'pg';
import { LeaderLease } from '#shared/projections/leaderLease';
import { ProjectionProgress } from '#shared/projections/projectionProgress';
import { ProjectionRunner } from '#shared/projections/projectionRunner';
import { readCheckpoints } from '#shared/projections/checkpointStore';
import {
  appendCounted,
  appliedCounts,
  countingProjection,
  leaderLockHolder,
} from './support/countingProjection';
import { eventStoreDatabase } from '#tests/support/eventStoreDatabase';
import { waitFor } from '#tests/support/waitFor';

const FAST_RETRY = { initialMs: 50, maxMs: 500 };

const db = eventStoreDatabase('runner');

test('after its leader connection is killed the runner leads again and resumes from its checkpoint', async () => {
  const progress = new ProjectionProgress();
  let failures = 0;
  const runner = new ProjectionRunner({
    store: db.store,
    pool: db.pool,
    projections: [countingProjection('killed_leader')],
    progress,
    batchSize: 7,
    backoff: FAST_RETRY,
    metrics: { setLoopUp: () => undefined, loopFailed: () => void (failures += 1) },
  });
  runner.start();
  try {
    const before = await appendCounted(db.store, 30);
    expect(await progress.waitFor(before.position, 20_000)).toBe(true);
    const firstLeader = await leaderLockHolder(db.pool);
    expect(firstLeader).toBeDefined();

    await db.pool.query('SELECT pg_terminate_backend($1)', [firstLeader]);
    const after = await appendCounted(db.store, 30);
    expect(await progress.waitFor(after.position, 20_000)).toBe(true);
    await waitFor(
      'a new leader connection',
      async () => ![undefined, firstLeader].includes(await leaderLockHolder(db.pool)),
      { timeoutMs: 20_000 },
    );
    expect(failures).toBeGreaterThanOrEqual(1);
    expect(runner.status()).toMatchObject({ state: 'up', leading: true });

    const applied = await appliedCounts(db.pool, 'killed_leader');
    expect([...applied.keys()].sort()).toEqual([...before.ids, ...after.ids].sort());
    expect([...applied.values()].filter((n) => n !== 1)).toEqual([]);
  } finally {
    await runner.stop();
  }
});

test('stop() gives the leader lock up: no advisory lock stays behind and another runner leads at once', async () => {
  const runner = new ProjectionRunner({
    store: db.store,
    pool: db.pool,
    projections: [countingProjection('stopped')],
  });
  runner.start();
  await waitFor('the runner leads', () => runner.status().leading, { timeoutMs: 20_000 });
  await runner.stop();
  // The connection went back to this pool: it must not keep the (session) lock there.
  expect(await leaderLockHolder(db.pool)).toBeUndefined();

  const elsewhere = new pg.Pool({ connectionString: db.url });
  const lease = new LeaderLease(elsewhere);
  try {
    expect(await lease.tryAcquire()).toBeDefined();
  } finally {
    await lease.release();
    await elsewhere.end();
  }
});

test('a new version is swapped in when caught up, also when the catch-up ends on a full batch', async () => {
  const v1 = new ProjectionRunner({
    store: db.store,
    pool: db.pool,
    projections: [countingProjection('full_batch', 1)],
  });
  v1.start();
  await waitFor('v1 leads', () => v1.status().leading, { timeoutMs: 20_000 });
  await v1.stop();
  // Nothing else is appended afterwards: a swap that waits for a short batch would never come.
  const events = await countEventsInStore();
  const batchSize = 5;
  const missing = (batchSize - (events % batchSize)) % batchSize || batchSize;
  await appendCounted(db.store, missing + batchSize);
  expect((await countEventsInStore()) % batchSize).toBe(0);

  const progress = new ProjectionProgress();
  const v2 = new ProjectionRunner({
    store: db.store,
    pool: db.pool,
    projections: [countingProjection('full_batch', 2)],
    progress,
    batchSize,
  });
  v2.start();
  try {
    await waitFor(
      'v2 swapped in without a further append',
      async () => {
        const rows = (await readCheckpoints(db.pool)).filter((c) => c.projection === 'full_batch');
        return rows.length === 1 && rows[0]!.version === 2 && rows[0]!.status === 'live';
      },
      { timeoutMs: 20_000 },
    );
    expect(await progress.waitFor(await db.store.headPosition(), 10_000)).toBe(true);
  } finally {
    await v2.stop();
  }
});

async function countEventsInStore(): Promise<number> {
  const { rows } = await db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${db.store.names.events}`);
  return Number(rows[0]!.n);
}
