import type { ProjectionContext } from '#shared/projections/projection';

/** The audit log's tables as both ways of filling them read and write them (auditLogProjection.ts). */

/** audit_events' columns, in the order the rows are written. */
export const AUDIT_COLUMNS =
  'seq, commit_position, prepare_position, event_id, event_type, stream_name, stream_revision, ' +
  'resource_type, resource_id, revision, internal, recorded_at, recorded_hwm, actor_id, request_id, data';

/** Where the log stands: the last row's seq and recorded_hwm (0 and the epoch when empty). */
export interface AuditHead {
  readonly seq: number;
  readonly hwm: Date;
}

export async function auditHead({ client, table }: ProjectionContext): Promise<AuditHead> {
  const { rows } = await client.query<{ seq: string; recorded_hwm: Date }>(
    `SELECT seq, recorded_hwm FROM ${table('audit_events')} ORDER BY seq DESC LIMIT 1`,
  );
  const row = rows[0];
  return row ? { seq: Number(row.seq), hwm: row.recorded_hwm } : { seq: 0, hwm: new Date(0) };
}

/**
 * The last public revision of each resource ("type:id" keys), for numbering a batch's events within
 * their resource (by the (resource_type, resource_id, seq) index).
 */
export async function lastRevisions(
  { client, table }: ProjectionContext,
  keys: readonly string[],
): Promise<Map<string, number>> {
  const revisions = new Map<string, number>();
  if (keys.length === 0) return revisions;
  const types = keys.map((k) => k.slice(0, k.indexOf(':')));
  const ids = keys.map((k) => k.slice(k.indexOf(':') + 1));
  const { rows } = await client.query<{ t: string; i: string; revision: string | null }>(
    `SELECT r.t, r.i,
            (SELECT e.revision FROM ${table('audit_events')} e
              WHERE e.resource_type = r.t AND e.resource_id = r.i AND NOT e.internal
              ORDER BY e.seq DESC LIMIT 1) AS revision
       FROM unnest($1::text[], $2::text[]) AS r (t, i)`,
    [types, ids],
  );
  for (const row of rows) if (row.revision !== null) revisions.set(`${row.t}:${row.i}`, Number(row.revision));
  return revisions;
}
