/**
 * The event log's query string (decisions.md "Audit"), read into a filter: every value checked here,
 * a bad one a 400 on its field. ajv has already checked what a schema can say (the resource type's
 * enum, limit's range, the time formats, include_internal's boolean).
 */
import { Type } from '@sinclair/typebox';
import { type FieldErrors, ValidationError } from '#shared/errors/httpErrors';
import { canonicalUuid, databaseIdOf } from '#shared/http/ids';
import { AUDIT_RESOURCE_TYPES, type AuditResourceType } from '#shared/audit/auditedEvent';
import { type GlobalPosition, parsePosition } from '#shared/eventStore/eventStore';
import { StringEnum } from '#shared/views/stringEnum';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;
/** A bound on the `type` list: each type is one index range of the page query. */
export const MAX_TYPES = 50;
const MAX_TEXT = 200;

export const AuditEventsQuery = Type.Object({
  resource_type: Type.Optional(
    StringEnum(AUDIT_RESOURCE_TYPES, { description: 'The resource events belong to.' }),
  ),
  resource_id: Type.Optional(
    Type.String({
      description: "With resource_type: the resource's id (an integer; a UUID for token and file_upload).",
    }),
  ),
  type: Type.Optional(
    Type.String({ description: 'Event types, comma-separated (e.g. BrainCreated,BrainUpdated).' }),
  ),
  actor: Type.Optional(Type.String({ description: 'The id of the user who caused the events.' })),
  request_id: Type.Optional(Type.String({ description: 'The request that appended the events.' })),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'Recorded at or after this time.' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'Recorded before this time.' })),
  after: Type.Optional(
    Type.String({
      description: 'An event position: the results start right after it (the cursor of `next`).',
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_LIMIT,
      description: `Events per page (default ${DEFAULT_LIMIT}); with NDJSON, the most events streamed.`,
    }),
  ),
  include_internal: Type.Optional(
    Type.Boolean({
      description: 'Include the write side bookkeeping (reservations, id allocation, token use).',
    }),
  ),
});

/** What the event log lists: every field optional, combined by AND. */
export interface EventLogFilter {
  readonly resource?: { readonly type: AuditResourceType; readonly id?: string };
  /** Distinct event types; absent for every type. */
  readonly types?: readonly string[];
  readonly actor?: number;
  readonly requestId?: string;
  readonly since?: Date;
  readonly until?: Date;
  readonly after?: GlobalPosition;
  readonly includeInternal: boolean;
}

const EVENT_TYPE = /^[A-Za-z][A-Za-z0-9_]{0,99}$/;
const UUID_RESOURCES: ReadonlySet<AuditResourceType> = new Set(['token', 'file_upload']);
/** PostgreSQL bigint: a position beyond it cannot name an event. */
const BIGINT_MIN = -(2n ** 63n);
const BIGINT_MAX = 2n ** 63n - 1n;

export const POSITION_MESSAGE = 'Enter an event position ("commit.prepare", as X-Event-Position gives it).';

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value.trim() : undefined);

function resourceFilter(query: Record<string, unknown>): EventLogFilter['resource'] {
  const type = query.resource_type as AuditResourceType | undefined;
  const id = text(query.resource_id);
  if (id === undefined) return type ? { type } : undefined;
  if (!type) throw ValidationError.field('resource_id', 'Give resource_type with resource_id.');
  if (UUID_RESOURCES.has(type)) {
    const uuid = canonicalUuid(id);
    if (!uuid) throw ValidationError.field('resource_id', `A ${type} id is a UUID.`);
    return { type, id: uuid };
  }
  const integer = databaseIdOf(id);
  if (integer === undefined)
    throw ValidationError.field('resource_id', `A ${type} id is a positive integer.`);
  return { type, id: String(integer) };
}

function typesFilter(value: unknown): string[] | undefined {
  const raw = text(value);
  if (raw === undefined) return undefined;
  const types = [...new Set(raw.split(',').map((t) => t.trim()))];
  if (types.some((t) => !EVENT_TYPE.test(t)))
    throw ValidationError.field('type', 'Enter event type names (letters and digits), separated by commas.');
  if (types.length > MAX_TYPES)
    throw ValidationError.field('type', `Ensure this list has no more than ${MAX_TYPES} event types.`);
  return types;
}

function actorFilter(value: unknown): number | undefined {
  const raw = text(value);
  if (raw === undefined) return undefined;
  const id = databaseIdOf(raw);
  if (id === undefined) throw ValidationError.field('actor', 'Enter a user id (a positive integer).');
  return id;
}

function requestIdFilter(value: unknown): string | undefined {
  const raw = text(value);
  if (raw === undefined) return undefined;
  if (raw === '' || raw.length > MAX_TEXT)
    throw ValidationError.field('request_id', `Enter a request id (1 to ${MAX_TEXT} characters).`);
  return raw;
}

function timeFilter(field: string, value: unknown): Date | undefined {
  const raw = text(value);
  if (raw === undefined) return undefined;
  const time = new Date(raw);
  // ajv's date-time format admits what Date cannot read (a leap second): the same 400.
  if (Number.isNaN(time.getTime()))
    throw ValidationError.field(
      field,
      'Enter an ISO 8601 date-time with a time zone (e.g. 2026-01-31T12:00:00Z).',
    );
  return time;
}

export function positionFilter(field: string, value: unknown): GlobalPosition | undefined {
  const raw = text(value);
  if (raw === undefined) return undefined;
  const position = parsePosition(raw);
  const fits = (n: bigint): boolean => n >= BIGINT_MIN && n <= BIGINT_MAX;
  if (!position || !fits(position.commit) || !fits(position.prepare))
    throw ValidationError.field(field, POSITION_MESSAGE);
  return position;
}

/** The filter of a validated query string; a ValidationError (400 on the field) for a bad value. */
export function eventLogFilter(query: Record<string, unknown>): EventLogFilter {
  // Every bad field is named at once, as DRF does.
  const errors: FieldErrors = {};
  const read = <T>(parse: () => T): T | undefined => {
    try {
      return parse();
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      Object.assign(errors, error.fields);
      return undefined;
    }
  };
  const filter: EventLogFilter = {
    resource: read(() => resourceFilter(query)),
    types: read(() => typesFilter(query.type)),
    actor: read(() => actorFilter(query.actor)),
    requestId: read(() => requestIdFilter(query.request_id)),
    since: read(() => timeFilter('since', query.since)),
    until: read(() => timeFilter('until', query.until)),
    after: read(() => positionFilter('after', query.after)),
    includeInternal: query.include_internal === true,
  };
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
  return filter;
}
