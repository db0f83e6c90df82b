import type { RecordedEvent } from '#shared/eventStore/eventStore';
import type { Projection, ProjectionContext } from '#shared/projections/projection';
import {
  actorIdOf,
  isInternalEvent,
  redactedData,
  referencesOfEvent,
  resourceOfEvent,
} from '#shared/audit/auditedEvent';
import { copyField, copyIn } from '#shared/audit/copyIn';
import { beginAuditCopyCatchUp } from './auditLogCopyCatchUp';
import { AUDIT_COLUMNS, auditHead, lastRevisions } from './auditLogTables';

/**
 * The audit log (decisions.md "Audit"): one row per event of the store, every event type, in the
 * global order the read models see and in the same transaction as them, so a write's response
 * (which waits for the read models) also finds its events here.
 *
 * Each row indexes the event for the event log's filters (resource, type, actor, request id, time)
 * and carries its payload with secrets removed; the chain's hashes are the ledger's own follower's
 * (ledgerProjection.ts), whose seq numbers the same events the same way. `seq` numbers the events
 * 1, 2, 3... in global order; `recorded_hwm` is the latest recorded time up to the row, which never
 * decreases with seq, so a time bound becomes a seq bound by one index lookup. `audit_references`
 * lists the other resources an event names ("species:3"), so a replay can find every brain that was
 * ever in a species, or every upload ever attached to a brain, up to a point in the order.
 */
export const AUDIT_LOG_PROJECTION = 'audit_log';

export const auditLogProjection: Projection = {
  name: AUDIT_LOG_PROJECTION,
  // 2: the chain's hash moved to the ledger's own projection.
  version: 2,
  tables: ['audit_events', 'audit_references'],
  eventTypes: 'all',

  async createTables({ client, table }) {
    const events = table('audit_events');
    await client.query(`
      CREATE TABLE ${events} (
        seq              bigint PRIMARY KEY,
        commit_position  bigint NOT NULL,
        prepare_position bigint NOT NULL,
        event_id         uuid NOT NULL,
        event_type       text NOT NULL,
        stream_name      text NOT NULL,
        stream_revision  bigint NOT NULL,
        resource_type    text,
        resource_id      text,
        revision         bigint,
        internal         boolean NOT NULL,
        recorded_at      timestamptz NOT NULL,
        recorded_hwm     timestamptz NOT NULL,
        actor_id         integer,
        request_id       text,
        data             jsonb NOT NULL
      )`);
    // apply's own look-up (lastRevisions); the readers' indexes are readerIndexes.
    await client.query(`CREATE INDEX ON ${events} (resource_type, resource_id, seq)`);
    await client.query(`
      CREATE TABLE ${table('audit_references')} (
        ref text NOT NULL,
        seq bigint NOT NULL,
        PRIMARY KEY (ref, seq)
      )`);
  },

  readerIndexes({ table }) {
    const events = table('audit_events');
    // The names PostgreSQL gave them when createTables built them (before readerIndexes existed).
    const name = (suffix: string) => `"audit_events_v${auditLogProjection.version}_${suffix}_idx"`;
    const schema = events.slice(0, events.lastIndexOf('.') + 1); // a DROP names the index's schema
    return [
      `CREATE UNIQUE INDEX IF NOT EXISTS ${name('commit_position_prepare_position')} ON ${events} (commit_position, prepare_position)`,
      // A type's range in seq order with the time and the internal flag beside each seq: the event
      // log's page checks its filters in the index alone, reading only the rows it answers.
      `CREATE INDEX IF NOT EXISTS ${name('event_type_seq_covering')} ON ${events} (event_type, seq) INCLUDE (recorded_at, internal)`,
      // The plain (event_type, seq) index it replaces, which deployments before it built.
      `DROP INDEX IF EXISTS ${schema}${name('event_type_seq')}`,
      `CREATE INDEX IF NOT EXISTS ${name('actor_id_seq')} ON ${events} (actor_id, seq)`,
      `CREATE INDEX IF NOT EXISTS ${name('request_id_seq')} ON ${events} (request_id, seq) WHERE request_id IS NOT NULL`,
      `CREATE INDEX IF NOT EXISTS ${name('recorded_hwm_seq')} ON ${events} (recorded_hwm, seq)`,
      // The event log's `until` past the seq where recorded_hwm reaches it (rows recorded before an earlier one).
      `CREATE INDEX IF NOT EXISTS ${name('tstzrange')} ON ${events} USING gist (tstzrange(recorded_at, recorded_hwm, '[]')) WHERE recorded_at < recorded_hwm`,
    ];
  },

  async apply(ctx, events) {
    await appendRows(ctx, events);
    return [];
  },

  beginCopyCatchUp: (ctx) => beginAuditCopyCatchUp(ctx),
};

/**
 * Appends the batch's rows with COPY, fed as they are computed. Within the batch's transaction: rows
 * and checkpoint commit together.
 */
async function appendRows(ctx: ProjectionContext, events: readonly RecordedEvent[]): Promise<void> {
  const head = await auditHead(ctx);
  const resources = events.map(resourceOfEvent);
  const publicKeys = new Set<string>();
  events.forEach((e, i) => {
    const r = resources[i];
    if (r && !isInternalEvent(e.type)) publicKeys.add(`${r.type}:${r.id}`);
  });
  const revisions = await lastRevisions(ctx, [...publicKeys]);

  const { client, table } = ctx;
  const copy = copyIn(client, `COPY ${table('audit_events')} (${AUDIT_COLUMNS}) FROM STDIN`);
  let refs = '';
  let latest = head.hwm.getTime();
  events.forEach((event, i) => {
    const seq = head.seq + i + 1;
    const resource = resources[i] ?? null;
    const internal = isInternalEvent(event.type);
    let revision: number | null = null;
    if (resource) {
      if (internal) revision = Number(event.streamRevision);
      else {
        const key = `${resource.type}:${resource.id}`;
        revision = (revisions.get(key) ?? -1) + 1;
        revisions.set(key, revision);
      }
    }
    latest = Math.max(latest, Date.parse(event.metadata.recordedAt));
    // copyIn sends what it is given in pieces of about 64 KiB as they fill.
    copy.write(
      `${seq}\t${event.position.commit}\t${event.position.prepare}\t${event.id}\t${copyField(event.type)}\t${copyField(event.streamName)}\t${event.streamRevision}\t${copyField(resource?.type ?? null)}\t${copyField(resource?.id ?? null)}\t${copyField(revision)}\t${internal ? 't' : 'f'}\t${copyField(event.metadata.recordedAt)}\t${new Date(latest).toISOString()}\t${copyField(actorIdOf(event.metadata.actor))}\t${copyField(event.metadata.requestId)}\t${copyField(JSON.stringify(redactedData(event.type, event.data)))}\n`,
    );
    for (const ref of referencesOfEvent(event)) refs += `${copyField(ref)}\t${seq}\n`;
  });
  await copy.end();
  if (refs.length > 0) {
    const copyRefs = copyIn(client, `COPY ${table('audit_references')} (ref, seq) FROM STDIN`);
    copyRefs.write(refs);
    await copyRefs.end();
  }
}
