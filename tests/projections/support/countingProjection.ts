import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { EventStore, GlobalPosition } from '#shared/eventStore/eventStore';
import type { Projection } from '#shared/projections/projection';
import { LEADER_LOCK } from '#shared/projections/leaderLease';

/**
 * A read model that records how often each event was applied: a skipped event has no row, an
 * event applied twice has applied = 2.
 */
export function countingProjection(name: string, version = 1): Projection {
  return {
    name,
    version,
    tables: [name],
    eventTypes: new Set(['Counted']),
    async createTables({ client, table }) {
      await client.query(`CREATE TABLE ${table(name)} (event_id uuid PRIMARY KEY, applied integer NOT NULL)`);
    },
    async apply({ client, table }, events) {
      for (const event of events)
        await client.query(
          `INSERT INTO ${table(name)} VALUES ($1, 1)
             ON CONFLICT (event_id) DO UPDATE SET applied = ${table(name)}.applied + 1`,
          [event.id],
        );
      return [];
    },
  };
}

/** Appends `count` Counted events, one per append; returns their ids and the last position. */
export async function appendCounted(
  store: EventStore,
  count: number,
): Promise<{ ids: string[]; position: GlobalPosition }> {
  const ids: string[] = [];
  let position: GlobalPosition | undefined;
  for (let i = 0; i < count; i++) {
    const id = randomUUID();
    ids.push(id);
    const result = await store.appendToStream(`counted-${i % 4}`, [
      {
        id,
        type: 'Counted',
        data: {},
        metadata: { actor: 'test', requestId: null, correlationId: id, causationId: null, schemaVersion: 1 },
      },
    ]);
    position = result.position;
  }
  return { ids, position: position! };
}

/** event id → times applied, as the read model says. */
export async function appliedCounts(db: pg.Pool, name: string): Promise<Map<string, number>> {
  const { rows } = await db.query<{ event_id: string; applied: number }>(
    `SELECT event_id, applied FROM public."${name}"`,
  );
  return new Map(rows.map((r) => [r.event_id, r.applied]));
}

/** The backend holding the projector's leader lock in this database, if any. */
export async function leaderLockHolder(db: pg.Pool): Promise<number | undefined> {
  const { rows } = await db.query<{ pid: number }>(
    `SELECT pid FROM pg_locks
      WHERE locktype = 'advisory' AND granted
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND objid::bigint = (hashtext($1)::bigint & 4294967295)`,
    [LEADER_LOCK],
  );
  return rows[0]?.pid;
}
