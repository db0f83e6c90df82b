/**
 * What auditedEvent.ts reads from an event's payload and metadata, read from their canonical bytes
 * (ChainedBytesWriter's) instead of from parsed objects, for the ledger's catch-up, which has those
 * bytes already and parses nothing it need not. Each answer is the one the object functions give
 * for the same event, or "ask the objects" (false, undefined) where the bytes alone would take more
 * care than the few events concerned are worth: a payload with a secret to remove, an escaped
 * reference, a type whose resource or references read other members, metadata that is no object.
 */
import { CanonicalMembers, hasEscape } from './canonicalMembers';
import {
  COLLABORATOR_EVENTS,
  REFERENCE_FIELDS,
  RESOURCE_IN_PAYLOAD,
  SECRET_FIELDS,
  actorIdOf,
} from './auditedEvent';

const names = (list: Iterable<string>): Buffer[] => [...list].map((name) => Buffer.from(name, 'latin1'));
/** Members redactedData drops: the secrets, and `__proto__` (an assignment would not copy it). */
const DROPPED = names([...SECRET_FIELDS, '__proto__']);
const REFERENCE_NAMES = names(REFERENCE_FIELDS.map(([field]) => field));
const REFERENCE_TYPES = REFERENCE_FIELDS.map(([, type]) => type);
const CHANGES = Buffer.from('changes', 'latin1');
const ACTOR = Buffer.from('actor', 'latin1');
const REQUEST_ID = Buffer.from('requestId', 'latin1');
const QUOTE = 0x22;
const NO_REFERENCES: readonly string[] = Object.freeze([]);

/** One reader, reused from event to event (not reentrant). */
export class AuditedEventBytes {
  private readonly members = new CanonicalMembers();
  private readonly changes = new CanonicalMembers();
  private refs: string[] = [];
  /** After readMetadata: the actor's user id (actorIdOf), or null. */
  actorId: number | null = null;
  /**
   * After readMetadata: the request id as the audit log writes it, either as text or, when the
   * metadata holds it as a plain string, as its bytes at [requestIdStart, requestIdEnd) (-1: text).
   */
  requestIdText: string | null = null;
  requestIdStart = -1;
  requestIdEnd = -1;

  /**
   * For an event of `type` whose canonical payload is buffer[start, end): its references
   * (referencesOfEvent, `own` being its resource's key), provided redactedData gives the payload
   * back as it is but for the order of its members. undefined when the parsed payload must answer.
   */
  references(
    type: string,
    buffer: Buffer,
    start: number,
    end: number,
    own: string | undefined,
  ): readonly string[] | undefined {
    if (RESOURCE_IN_PAYLOAD.has(type) || COLLABORATOR_EVENTS.has(type)) return undefined;
    const members = this.members;
    if (!members.scan(buffer, start, end)) return undefined; // not an object: redactedData makes it {}
    this.refs.length = 0;
    for (const dropped of DROPPED) if (members.indexOf(buffer, dropped) >= 0) return undefined;
    if (!this.collect(members, buffer)) return undefined;
    const changes = members.indexOf(buffer, CHANGES);
    if (changes >= 0 && this.changes.scan(buffer, members.valueStarts[changes]!, members.valueEnds[changes]!))
      if (!this.collect(this.changes, buffer)) return undefined;
    const refs = this.refs;
    if (refs.length === 0) return NO_REFERENCES;
    const unique = [...new Set(refs)].filter((ref) => ref !== own);
    return unique.length === 0 ? NO_REFERENCES : unique.sort();
  }

  /** REFERENCE_FIELDS among `members`, as referencesOfEvent lists them; false for an escaped string. */
  private collect(members: CanonicalMembers, buffer: Buffer): boolean {
    for (let f = 0; f < REFERENCE_NAMES.length; f++) {
      const m = members.indexOf(buffer, REFERENCE_NAMES[f]!);
      if (m < 0) continue;
      const start = members.valueStarts[m]!;
      const end = members.valueEnds[m]!;
      const first = buffer[start]!;
      if (first === QUOTE) {
        if (end - start === 2) continue; // ''
        if (hasEscape(buffer, start, end)) return false;
        this.refs.push(`${REFERENCE_TYPES[f]!}:${buffer.toString('utf8', start + 1, end - 1)}`);
      } else if (first === 0x2d || (first >= 0x30 && first <= 0x39)) {
        // A canonical number is written as String(number) writes it.
        this.refs.push(`${REFERENCE_TYPES[f]!}:${buffer.toString('latin1', start, end)}`);
      }
    }
    return true;
  }

  /**
   * Reads actorId and the request id from the canonical metadata in buffer[start, end) (the stored
   * metadata with recordedAt); false when it is not an object (the parsed metadata must answer).
   */
  readMetadata(buffer: Buffer, start: number, end: number): boolean {
    const members = this.members;
    if (!members.scan(buffer, start, end)) return false;
    const actor = members.indexOf(buffer, ACTOR);
    this.actorId =
      actor < 0 ? null : actorIdOfJson(buffer, members.valueStarts[actor]!, members.valueEnds[actor]!);
    const requestId = members.indexOf(buffer, REQUEST_ID);
    this.requestIdStart = -1;
    this.requestIdEnd = -1;
    this.requestIdText = null;
    if (requestId < 0) return true;
    const valueStart = members.valueStarts[requestId]!;
    const valueEnd = members.valueEnds[requestId]!;
    if (buffer[valueStart] === QUOTE && !hasEscape(buffer, valueStart, valueEnd)) {
      this.requestIdStart = valueStart + 1;
      this.requestIdEnd = valueEnd - 1;
    } else this.requestIdText = auditText(JSON.parse(buffer.toString('utf8', valueStart, valueEnd)));
    return true;
  }
}

/** actorIdOf of the JSON value in buffer[start, end) (actorIdOf's test reads any value as String() gives it). */
function actorIdOfJson(buffer: Buffer, start: number, end: number): number | null {
  if (buffer[start] !== QUOTE) return actorIdOfParsed(buffer, start, end);
  // A canonical string keeps only quotes, backslashes and control characters escaped: never a digit.
  const length = end - start - 2;
  if (length < 1 || length > 10) return null;
  let id = 0;
  for (let i = start + 1; i < end - 1; i++) {
    const c = buffer[i]!;
    if (c < 0x30 || c > 0x39) return null;
    id = id * 10 + (c - 0x30);
  }
  return id;
}

function actorIdOfParsed(buffer: Buffer, start: number, end: number): number | null {
  return actorIdOf(String(JSON.parse(buffer.toString('utf8', start, end))));
}

/** A metadata value as the audit log's text column holds it (what copyField writes): null for none. */
export function auditText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 't' : 'f';
  // An object or array as copyField writes it: String() of it ('[object Object]', 'a,b').
  // eslint-disable-next-line @typescript-eslint/no-base-to-string
  return String(value);
}
