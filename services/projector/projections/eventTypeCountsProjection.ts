import type { Projection } from '#shared/projections/projection';
import { accountsProjection } from './accountsProjection';

/** Events no read model needs but auditors count: uniqueness reservations and id allocation. */
const WRITE_SIDE_BOOKKEEPING = ['ValueReserved', 'ReservationReleased', 'IdAllocated'];

/**
 * Audit read model: how many events of each type the read models have applied, and the newest one.
 * Deliberately a counter (not idempotent by construction), so comparing it with the event store
 * proves each event was applied exactly once (tests/e2e/crashRecovery.e2e.test.ts).
 */
export const eventTypeCountsProjection: Projection = {
  name: 'event_type_counts',
  version: 1,
  tables: ['event_type_counts'],
  eventTypes: new Set([...accountsProjection.eventTypes, ...WRITE_SIDE_BOOKKEEPING]),

  async createTables({ client, table }) {
    await client.query(`
      CREATE TABLE ${table('event_type_counts')} (
        event_type text PRIMARY KEY,
        events bigint NOT NULL,
        last_recorded_at timestamptz NOT NULL
      )`);
  },

  async apply({ client, table }, events) {
    const counts = new Map<string, { n: number; last: string }>();
    for (const e of events)
      counts.set(e.type, { n: (counts.get(e.type)?.n ?? 0) + 1, last: e.metadata.recordedAt });
    await client.query(
      `INSERT INTO ${table('event_type_counts')} (event_type, events, last_recorded_at)
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::timestamptz[])
       ON CONFLICT (event_type) DO UPDATE SET events = ${table('event_type_counts')}.events + excluded.events,
                                              last_recorded_at = GREATEST(${table('event_type_counts')}.last_recorded_at, excluded.last_recorded_at)`,
      [[...counts.keys()], [...counts.values()].map((c) => c.n), [...counts.values()].map((c) => c.last)],
    );
    return [];
  },
};
