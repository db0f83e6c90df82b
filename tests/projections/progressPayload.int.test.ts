import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Projection } from '#shared/projections/projection';
import { ProjectionProgress } from '#shared/projections/projectionProgress';
import { PROGRESS_CHANNEL, ProjectionRunner } from '#shared/projections/projectionRunner';
import { formatPosition } from '#shared/eventStore/eventStore';
import { appendCounted, appliedCounts, countingProjection } from './support/countingProjection';
import { eventStoreDatabase } from '#tests/support/eventStoreDatabase';
import { waitFor } from '#tests/support/waitFor';

const db = eventStoreDatabase('progress_payload');

/**
 * A read model naming one long key per event (an upload's "upload:<uuid>" is 43 characters): a
 * batch of fewer than 200 such keys is still more than PostgreSQL takes in one NOTIFY.
 */
function longKeys(name: string): Projection {
  const inner = countingProjection(name);
  return {
    ...inner,
    apply: async (context, events) => {
      await inner.apply(context, events);
      return events.map((e) => `upload:${e.id}:${'x'.repeat(20)}`);
    },
  };
}

test('a batch whose changed keys would not fit in a NOTIFY is applied and announced as "everything"', async () => {
  const listener = new pg.Client({ connectionString: db.url });
  await listener.connect();
  const notified: string[] = [];
  listener.on('notification', (m) => notified.push(m.payload ?? ''));
  await listener.query(`LISTEN ${PROGRESS_CHANNEL}`);
  try {
    const appended = await appendCounted(db.store, 150);
    // All of them readable first, so that the catch-up reads them as one batch of 150: under the
    // parallel suite another database's open transaction can hold the last ones back for a moment,
    // and the catch-up then applies them in two batches, the second small enough to name its keys.
    await waitFor(
      'the 150 events readable',
      async () => (await db.store.readAll({ maxCount: 1000 })).length === 150,
      { timeoutMs: 30_000 },
    );
    // Catch-up first, then live: both notify.
    const projection = longKeys('payload_long');
    await new ProjectionRunner({
      store: db.store,
      pool: db.pool,
      projections: [projection],
      batchSize: 150,
    }).catchUp();
    expect((await appliedCounts(db.pool, 'payload_long')).size).toBe(150);
    await waitFor('the catch-up batch announced', () =>
      notified.includes(`${formatPosition(appended.position)} *`),
    );

    const progress = new ProjectionProgress();
    const runner = new ProjectionRunner({
      store: db.store,
      pool: db.pool,
      projections: [projection],
      progress,
      batchSize: 500,
    });
    runner.start();
    try {
      // One append of 150 events: one live batch.
      const live = await db.store.appendToStream(
        'counted-live',
        Array.from({ length: 150 }, () => {
          const id = randomUUID();
          return {
            id,
            type: 'Counted',
            data: {},
            metadata: {
              actor: 'test',
              requestId: null,
              correlationId: id,
              causationId: null,
              schemaVersion: 1,
            },
          };
        }),
      );
      expect(await progress.waitFor(live.position, 20_000)).toBe(true);
      expect((await appliedCounts(db.pool, 'payload_long')).size).toBe(300);
      await waitFor('the live batch announced', () =>
        notified.includes(`${formatPosition(live.position)} *`),
      );
    } finally {
      await runner.stop();
    }
  } finally {
    await listener.end();
  }
});
