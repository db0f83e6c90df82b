import pg from 'pg';
import type { Projection } from '#shared/projections/projection';
import { ProjectionProgress } from '#shared/projections/projectionProgress';
import { PROGRESS_CHANNEL, ProjectionRunner } from '#shared/projections/projectionRunner';
import { readCheckpoints } from '#shared/projections/checkpointStore';
import { formatPosition } from '#shared/eventStore/eventStore';
import { appendCounted, appliedCounts, countingProjection } from './support/countingProjection';
import { eventStoreDatabase } from '#tests/support/eventStoreDatabase';
import { waitFor } from '#tests/support/waitFor';

const FAST_RETRY = { initialMs: 50, maxMs: 500 };
const db = eventStoreDatabase('lanes');

/** A counting projection whose apply runs `before` first (to hold it, or to fail it). */
function gated(name: string, before: () => Promise<void>): Projection {
  const inner = countingProjection(name);
  return { ...inner, apply: async (context, events) => (await before(), inner.apply(context, events)) };
}

/** A read model no Counted event concerns: it only follows along. */
const bystander = (name: string): Projection => ({
  ...countingProjection(name),
  eventTypes: new Set(['Other']),
});

test('live batches are applied by each read model in its own transaction, all at once, each event once, checkpoints and notification after all', async () => {
  // a's transaction cannot finish before b's has started: one transaction for both would hang here.
  let bStarted!: () => void;
  const bHasStarted = new Promise<void>((resolve) => (bStarted = resolve));
  let firstBatch = true;
  const a = gated('lanes_a', async () => {
    if (firstBatch) await bHasStarted;
  });
  const b = gated('lanes_b', () => {
    firstBatch = false;
    bStarted();
    return Promise.resolve();
  });
  const listener = new pg.Client({ connectionString: db.url });
  await listener.connect();
  const notified: string[] = [];
  listener.on('notification', (m) => notified.push(m.payload ?? ''));
  await listener.query(`LISTEN ${PROGRESS_CHANNEL}`);
  const progress = new ProjectionProgress();
  const runner = new ProjectionRunner({
    store: db.store,
    pool: db.pool,
    projections: [a, b, countingProjection('lanes_c'), bystander('lanes_idle')],
    progress,
    backoff: FAST_RETRY,
  });
  runner.start();
  try {
    const appended = await appendCounted(db.store, 40);
    expect(await progress.waitFor(appended.position, 20_000)).toBe(true);
    for (const name of ['lanes_a', 'lanes_b', 'lanes_c']) {
      const applied = await appliedCounts(db.pool, name);
      expect([...applied.keys()].sort()).toEqual([...appended.ids].sort());
      expect([...applied.values()].filter((n) => n !== 1)).toEqual([]);
    }
    expect(await appliedCounts(db.pool, 'lanes_idle')).toEqual(new Map());
    const checkpoints = (await readCheckpoints(db.pool)).filter((c) => c.projection.startsWith('lanes_'));
    expect(checkpoints.map((c) => [c.projection, formatPosition(c.position)]).sort()).toEqual(
      ['lanes_a', 'lanes_b', 'lanes_c', 'lanes_idle'].map((n) => [n, formatPosition(appended.position)]),
    );
    // Remote readers hear the end of the batch once every read model has it.
    await waitFor('the last batch notified', () =>
      notified.some((p) => p.startsWith(formatPosition(appended.position))),
    );
  } finally {
    await runner.stop();
    await listener.end();
  }
});

test('a read model failing a live batch leaves the others committed; the runner resumes and every event is applied once everywhere', async () => {
  let failures = 0;
  let failNext = true;
  const flaky = gated('lanes_flaky', () => {
    if (!failNext) return Promise.resolve();
    failNext = false;
    return Promise.reject(new Error('flaky read model'));
  });
  const progress = new ProjectionProgress();
  const runner = new ProjectionRunner({
    store: db.store,
    pool: db.pool,
    projections: [flaky, countingProjection('lanes_steady')],
    progress,
    backoff: FAST_RETRY,
    metrics: { setLoopUp: () => undefined, loopFailed: () => void (failures += 1) },
  });
  runner.start();
  try {
    const appended = await appendCounted(db.store, 25);
    expect(await progress.waitFor(appended.position, 20_000)).toBe(true);
    expect(failures).toBeGreaterThanOrEqual(1);
    for (const name of ['lanes_flaky', 'lanes_steady']) {
      // The events of the test before are theirs too: they start from the beginning.
      const applied = await appliedCounts(db.pool, name);
      expect(appended.ids.filter((id) => applied.get(id) !== 1)).toEqual([]);
      expect([...applied.values()].filter((n) => n !== 1)).toEqual([]);
      expect(applied.size).toBe(65);
    }
  } finally {
    await runner.stop();
  }
});
