/**
 * One entry of the event log (decisions.md "Audit"), read from the audit_log read model. History
 * entries are these without `data`, plus `changes`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { Nullable } from '#shared/views/nullable';
import { StringEnum } from '#shared/views/stringEnum';
import { AUDIT_RESOURCE_TYPES } from '#shared/audit/auditedEvent';

/** A row of `audit_events` with its actor's username. */
export interface AuditRow {
  readonly seq: string;
  readonly commit_position: string;
  readonly prepare_position: string;
  readonly event_id: string;
  readonly event_type: string;
  readonly resource_type: string | null;
  readonly resource_id: string | null;
  readonly revision: string | null;
  readonly recorded_at: Date;
  readonly actor_id: number | null;
  readonly actor_username: string | null;
  readonly request_id: string | null;
  readonly data?: Record<string, unknown>;
}

const BASE_COLUMNS = `e.seq, e.commit_position, e.prepare_position, e.event_id, e.event_type,
  e.resource_type, e.resource_id, e.revision, e.recorded_at, e.actor_id, u.username AS actor_username,
  e.request_id`;

/** `SELECT … FROM audit_events e LEFT JOIN users u` (before WHERE); with or without the payload. */
export const auditSelect = (withData: boolean): string =>
  `SELECT ${BASE_COLUMNS}${withData ? ', e.data' : ''}
     FROM audit_events e LEFT JOIN users u ON u.id = e.actor_id`;

/** The position as a write answers it in X-Event-Position ("commit.prepare"). */
export const auditPosition = (row: Pick<AuditRow, 'commit_position' | 'prepare_position'>): string =>
  `${row.commit_position}.${row.prepare_position}`;

function resourceOf(row: AuditRow): { type: string; id: string | number } | null {
  if (row.resource_type === null || row.resource_id === null) return null;
  const numeric = row.resource_type !== 'token' && row.resource_type !== 'file_upload';
  return { type: row.resource_type, id: numeric ? Number(row.resource_id) : row.resource_id };
}

/** The entry without `data` (what history entries start from). */
export function auditEntryBase(row: AuditRow) {
  return {
    position: auditPosition(row),
    id: row.event_id,
    type: row.event_type,
    resource: resourceOf(row),
    revision: row.revision === null ? null : Number(row.revision),
    recorded_at: row.recorded_at.toISOString(),
    actor: row.actor_id === null ? null : { id: row.actor_id, username: row.actor_username },
    request_id: row.request_id,
  };
}

export const auditEntryJson = (row: AuditRow) => ({ ...auditEntryBase(row), data: row.data ?? {} });

const entryBaseProperties = {
  position: Type.String({ description: 'Opaque, ordered; the X-Event-Position of the write that appended it.' }),
  id: Type.String({ format: 'uuid', description: 'The event id.' }),
  type: Type.String({ description: 'Event type, e.g. BrainCreated.' }),
  resource: Nullable(
    Type.Object({
      type: StringEnum(AUDIT_RESOURCE_TYPES),
      id: Type.Union([Type.Integer(), Type.String({ format: 'uuid' })]),
    }),
  ),
  revision: Nullable(Type.Integer({ description: '0-based within its resource.' })),
  recorded_at: Type.String({ format: 'date-time' }),
  actor: Nullable(Type.Object({ id: Type.Integer(), username: Nullable(Type.String()) })),
  request_id: Nullable(Type.String()),
};

export const auditEntrySchema = Type.Object({
  ...entryBaseProperties,
  data: Type.Object({}, { additionalProperties: true, description: 'The payload, secrets and hashes removed.' }),
});
export type AuditEntryJson = Static<typeof auditEntrySchema>;

export const historyEntrySchema = Type.Object({
  ...entryBaseProperties,
  changes: Type.Record(Type.String(), Type.Tuple([Type.Unknown(), Type.Unknown()]), {
    description: '{field: [before, after]} of the representation; a create has null before every field.',
  }),
});
