/**
 * How an event reads to an auditor (decisions.md "Audit"): which public resource it belongs to,
 * whether it is write-side bookkeeping, which other resources it names, and its payload without
 * secrets or hashes. Pure functions of the recorded event, shared by the audit-log projection (which
 * indexes them) and the replays behind history and "as of" reads.
 */
import type { RecordedEvent } from '#shared/eventStore/eventStore';

export const AUDIT_RESOURCE_TYPES = [
  'user',
  'token',
  'category',
  'species',
  'atlas',
  'brain',
  'file_upload',
] as const;
export type AuditResourceType = (typeof AUDIT_RESOURCE_TYPES)[number];

export interface AuditResource {
  readonly type: AuditResourceType;
  /** The public id as text: an integer id, or a token's or file upload's UUID. */
  readonly id: string;
}

/**
 * Bookkeeping of the write side, listed only with include_internal=true: uniqueness reservations
 * (and the fence that takes one over), id allocation, token use, and processing lease renewals.
 */
export const INTERNAL_EVENT_TYPES: ReadonlySet<string> = new Set([
  'ValueReserved',
  'ReservationReleased',
  'StreamFenced',
  'IdAllocated',
  'AccessTokenUsed',
  'UploadProcessingLeaseRenewed',
]);

export const isInternalEvent = (type: string): boolean => INTERNAL_EVENT_TYPES.has(type);

/** Stream prefix -> the resource its events change (one stream per resource, except tokens). */
const STREAM_RESOURCES: ReadonlyArray<readonly [string, AuditResourceType]> = [
  ['user-', 'user'],
  ['category-', 'category'],
  ['species-', 'species'],
  ['atlas-', 'atlas'],
  ['brain-', 'brain'],
  ['upload-', 'file_upload'],
  ['accessTokenUsage-', 'token'],
];

/** id-allocation sequence name -> the resource type of the ids it hands out. */
const SEQUENCE_RESOURCES: Readonly<Record<string, AuditResourceType>> = {
  user: 'user',
  category: 'category',
  species: 'species',
  atlas: 'atlas',
  brain: 'brain',
};

/** The resource a stream belongs to, from its name; undefined for bookkeeping streams. */
export function resourceOfStream(streamName: string): AuditResource | undefined {
  for (const [prefix, type] of STREAM_RESOURCES)
    if (streamName.startsWith(prefix) && streamName.length > prefix.length)
      return { type, id: streamName.slice(prefix.length) };
  return undefined;
}

const record = (data: unknown): Record<string, unknown> =>
  data !== null && typeof data === 'object' ? (data as Record<string, unknown>) : {};

/**
 * The event types whose resource resourceOfEvent reads from the payload; any other event's is its
 * stream's (resourceOfStream).
 */
export const RESOURCE_IN_PAYLOAD: ReadonlySet<string> = new Set([
  'AccessTokenIssued',
  'AccessTokenRevoked',
  'AccessTokenUsed',
  'ValueReserved',
  'ReservationReleased',
  'IdAllocated',
]);

/**
 * The resource an event belongs to. Token events live in their user's stream but are the token's;
 * bookkeeping events belong to the resource they serve (a reservation to its owner, an allocated id
 * to the resource it became). null when there is none.
 */
export function resourceOfEvent(
  event: Pick<RecordedEvent, 'type' | 'data' | 'streamName'>,
): AuditResource | null {
  const data = record(event.data);
  switch (event.type) {
    case 'AccessTokenIssued':
    case 'AccessTokenRevoked':
    case 'AccessTokenUsed':
      return typeof data.tokenId === 'string' ? { type: 'token', id: data.tokenId } : null;
    case 'ValueReserved':
    case 'ReservationReleased':
      return typeof data.ownerId === 'string' ? (resourceOfStream(data.ownerId) ?? null) : null;
    case 'IdAllocated': {
      const type = typeof data.sequence === 'string' ? SEQUENCE_RESOURCES[data.sequence] : undefined;
      return type && typeof data.id === 'number' ? { type, id: String(data.id) } : null;
    }
    default:
      return resourceOfStream(event.streamName) ?? null;
  }
}

/**
 * The references a replay follows: memberships (a brain in an atlas, species and category; an atlas
 * in a species; a species in a category) and uploads attached to a brain. People are found through
 * the actor column instead, so user ids are not listed, except the one place where a person is what
 * the event is about without acting: the user a brain was shared with or unshared from
 * (COLLABORATOR_EVENTS), so that the brains ever shared with a user can be found.
 */
/** A brain's events about a collaborator (shared/domain/brains/events): they name the user. */
export const COLLABORATOR_EVENTS: ReadonlySet<string> = new Set([
  'BrainCollaboratorAdded',
  'BrainCollaboratorRoleChanged',
  'BrainCollaboratorRemoved',
]);

export const REFERENCE_FIELDS: ReadonlyArray<readonly [string, AuditResourceType]> = [
  ['associatedBrainId', 'brain'],
  ['atlasId', 'atlas'],
  ['speciesId', 'species'],
  ['categoryId', 'category'],
];

/**
 * Every other resource the event places its own resource in ("species:3", "brain:12"): what lets a
 * replay find the brains that were ever in a species, or the uploads ever attached to a brain,
 * without a second copy of their state. Looks at the payload and at a `changes` object in it.
 */
export function referencesOfEvent(event: Pick<RecordedEvent, 'type' | 'data' | 'streamName'>): string[] {
  const own = resourceOfEvent(event);
  const ownKey = own ? `${own.type}:${own.id}` : undefined;
  const refs = new Set<string>();
  const data = record(event.data);
  if (COLLABORATOR_EVENTS.has(event.type) && typeof data.userId === 'number') refs.add(`user:${data.userId}`);
  const scan = (fields: Record<string, unknown>): void => {
    for (const [field, type] of REFERENCE_FIELDS) {
      const value = fields[field];
      if (typeof value === 'number' || (typeof value === 'string' && value !== ''))
        refs.add(`${type}:${value}`);
    }
  };
  scan(data);
  scan(record(data.changes));
  if (ownKey) refs.delete(ownKey);
  return [...refs].sort();
}

/** Payload fields that never leave the service: password and token hashes. */
export const SECRET_FIELDS: ReadonlySet<string> = new Set(['passwordHash', 'tokenHash', 'secret', 'token']);

/** The event types whose payload redactedData trims by a member's value, not by names alone. */
export const REDACTED_BY_VALUE: ReadonlySet<string> = new Set(['ValueReserved']);

/**
 * The payload as an auditor sees it: without secrets or hashes of secrets, and without the raw
 * e-mail address a reservation holds (its stream name hides it on purpose).
 */
export function redactedData(type: string, data: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(record(data)))
    if (!SECRET_FIELDS.has(field)) out[field] = value;
  if (REDACTED_BY_VALUE.has(type) && out.scope === 'email') delete out.value;
  return out;
}

/** The actor's user id, or null for the system (metadata.actor is the id as text or 'system'). */
export function actorIdOf(actor: string): number | null {
  return /^\d{1,10}$/.test(actor) ? Number(actor) : null;
}
