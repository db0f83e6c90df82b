import type pg from 'pg';
import type { Projection } from '#shared/projections/projection';
import { ProjectionProgress } from '#shared/projections/projectionProgress';
import { ProjectionRunner } from '#shared/projections/projectionRunner';
import { appendCounted, appliedCounts, countingProjection } from './support/countingProjection';
import { eventStoreDatabase } from '#tests/support/eventStoreDatabase';

const db = eventStoreDatabase('reader_indexes');

/** countingProjection with a reader index, noting whether the index existed at each batch. */
function indexedProjection(name: string, version = 1, failAtBatch?: number) {
  const base = countingProjection(name, version);
  const seen: boolean[] = [];
  const index = `${name}_v${version}_applied_idx`;
  const projection: Projection = {
    ...base,
    readerIndexes: ({ table }) => [`CREATE INDEX IF NOT EXISTS "${index}" ON ${table(name)} (applied)`],
    async apply(ctx, events) {
      seen.push(await indexExists(ctx.client, index));
      if (seen.length === failAtBatch) throw new Error('projection failed');
      return base.apply(ctx, events);
    },
  };
  return { projection, seen, index };
}

async function indexExists(db: pg.Pool | pg.PoolClient, index: string): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM pg_indexes WHERE schemaname = 'rm' AND indexname = $1`, [
    index,
  ]);
  return rows.length === 1;
}

test('a catch-up fills new tables without their reader indexes and builds them at its end', async () => {
  const written = await appendCounted(db.store, 25);
  const { projection, seen, index } = indexedProjection('bulk');
  const applied = await new ProjectionRunner({
    store: db.store,
    pool: db.pool,
    projections: [projection],
    batchSize: 10,
  }).catchUp();
  expect(applied).toBeGreaterThanOrEqual(25);
  expect(seen.length).toBeGreaterThanOrEqual(3);
  expect(seen.every((exists) => !exists)).toBe(true);
  expect(await indexExists(db.pool, index)).toBe(true);
  const counts = await appliedCounts(db.pool, 'bulk');
  expect(written.ids.map((id) => counts.get(id))).toEqual(written.ids.map(() => 1));
});

test('a catch-up that failed half-way leaves them out; the next runner start builds them before going up', async () => {
  await appendCounted(db.store, 25);
  const broken = indexedProjection('half_way', 1, 2);
  const runner = new ProjectionRunner({
    store: db.store,
    pool: db.pool,
    projections: [broken.projection],
    batchSize: 10,
  });
  await expect(runner.catchUp()).rejects.toThrow('projection failed');
  expect(await indexExists(db.pool, broken.index)).toBe(false);

  const { projection, index } = indexedProjection('half_way');
  const progress = new ProjectionProgress();
  const live = new ProjectionRunner({ store: db.store, pool: db.pool, projections: [projection], progress });
  live.start();
  try {
    const after = await appendCounted(db.store, 1);
    expect(await progress.waitFor(after.position, 20_000)).toBe(true);
    expect(await indexExists(db.pool, index)).toBe(true);
  } finally {
    await live.stop();
  }
});

test('a first version installed by a live runner has its reader indexes from the start', async () => {
  const { projection, seen, index } = indexedProjection('live_first');
  const progress = new ProjectionProgress();
  const runner = new ProjectionRunner({
    store: db.store,
    pool: db.pool,
    projections: [projection],
    progress,
  });
  runner.start();
  try {
    const after = await appendCounted(db.store, 3);
    expect(await progress.waitFor(after.position, 20_000)).toBe(true);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every(Boolean)).toBe(true);
    expect(await indexExists(db.pool, index)).toBe(true);
  } finally {
    await runner.stop();
  }
});

test('a new version builds beside the live one without them and has them when swapped in', async () => {
  const v1 = indexedProjection('swapped', 1);
  await new ProjectionRunner({ store: db.store, pool: db.pool, projections: [v1.projection] }).catchUp();
  const v2 = indexedProjection('swapped', 2);
  const progress = new ProjectionProgress();
  const runner = new ProjectionRunner({
    store: db.store,
    pool: db.pool,
    projections: [v2.projection],
    progress,
    batchSize: 10,
  });
  runner.start();
  try {
    const after = await appendCounted(db.store, 1);
    expect(await progress.waitFor(after.position, 20_000)).toBe(true);
    expect(v2.seen[0]).toBe(false); // its first batch, while v1 was still live
    expect(await indexExists(db.pool, v2.index)).toBe(true);
  } finally {
    await runner.stop();
  }
});
