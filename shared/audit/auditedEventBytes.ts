/**
 * What auditedEvent.ts reads from an event's payload and metadata, read from their canonical bytes
 * (ChainedBytesWriter's) instead of from parsed objects, for the ledger's catch-up, which has those
 * bytes already and parses nothing it need not. Each answer is the one the object functions give
 * for the same event, or "ask the objects" (false, undefined) where the bytes alone would take more
 * care than the few events concerned are worth: a payload with a secret to remove, an escaped
 * reference, a type whose redaction or references read other members, metadata that is no object.
 */
import { CanonicalMembers, hasEscape } from './canonicalMembers';
import type { AuditResource } from './auditedEvent';
import {
  COLLABORATOR_EVENTS,
  REDACTED_BY_VALUE,
  REFERENCE_FIELDS,
  SECRET_FIELDS,
  actorIdOf,
} from './auditedEvent';

// What a payload member's name means here: a reference field (its index in REFERENCE_FIELDS), or
// one of these three. DROPPED: removed by redactedData, a secret or `__proto__` (an assignment would
// not copy it).
const DROPPED = -1;
const CHANGES = -2;
const OTHER = -3;

/** Names that matter, by length: [bytes, meaning]. */
const NAMES: ReadonlyArray<ReadonlyArray<readonly [Buffer, number]>> = (() => {
  const table: [Buffer, number][][] = [];
  const add = (name: string, meaning: number) =>
    (table[name.length] ??= []).push([Buffer.from(name, 'latin1'), meaning]);
  for (const name of [...SECRET_FIELDS, '__proto__']) add(name, DROPPED);
  add('changes', CHANGES);
  REFERENCE_FIELDS.forEach(([field], i) => add(field, i));
  return table;
})();
const REFERENCE_TYPES = REFERENCE_FIELDS.map(([, type]) => type);

/** The meaning of the name at buffer[start, end), OTHER when it has none here. */
function meaningOf(buffer: Buffer, start: number, end: number): number {
  const candidates = NAMES[end - start];
  if (!candidates) return OTHER;
  for (const [name, meaning] of candidates) {
    let k = 0;
    while (k < name.length && buffer[start + k] === name[k]) k++;
    if (k === name.length) return meaning;
  }
  return OTHER;
}

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
   * (referencesOfEvent; `own` is its resource), provided redactedData gives the payload back as it
   * is but for the order of its members. undefined when the parsed payload must answer.
   */
  references(
    type: string,
    buffer: Buffer,
    start: number,
    end: number,
    own: AuditResource | null,
  ): readonly string[] | undefined {
    if (REDACTED_BY_VALUE.has(type) || COLLABORATOR_EVENTS.has(type)) return undefined;
    const members = this.members;
    if (!members.scan(buffer, start, end)) return undefined; // not an object: redactedData makes it {}
    const refs = this.refs;
    refs.length = 0;
    for (let m = 0; m < members.count; m++) {
      const meaning = meaningOf(buffer, members.nameStarts[m]!, members.nameEnds[m]!);
      if (meaning === OTHER) continue;
      if (meaning === DROPPED) return undefined;
      if (meaning >= 0) {
        if (!this.reference(meaning, buffer, members.valueStarts[m]!, members.valueEnds[m]!))
          return undefined;
      } else if (this.changes.scan(buffer, members.valueStarts[m]!, members.valueEnds[m]!)) {
        const changes = this.changes;
        for (let c = 0; c < changes.count; c++) {
          const field = meaningOf(buffer, changes.nameStarts[c]!, changes.nameEnds[c]!);
          if (field >= 0 && !this.reference(field, buffer, changes.valueStarts[c]!, changes.valueEnds[c]!))
            return undefined;
        }
      }
    }
    if (refs.length === 0) return NO_REFERENCES;
    const ownKey = own ? `${own.type}:${own.id}` : undefined;
    const unique = [...new Set(refs)].filter((ref) => ref !== ownKey);
    return unique.length === 0 ? NO_REFERENCES : unique.sort();
  }

  /** The reference REFERENCE_FIELDS[field] with the value buffer[start, end) makes, if any; false for an escaped string. */
  private reference(field: number, buffer: Buffer, start: number, end: number): boolean {
    const first = buffer[start]!;
    if (first === QUOTE) {
      if (end - start === 2) return true; // ''
      if (hasEscape(buffer, start, end)) return false;
      this.refs.push(`${REFERENCE_TYPES[field]!}:${buffer.toString('utf8', start + 1, end - 1)}`);
    } else if (first === 0x2d || (first >= 0x30 && first <= 0x39)) {
      // A canonical number is written as String(number) writes it.
      this.refs.push(`${REFERENCE_TYPES[field]!}:${buffer.toString('latin1', start, end)}`);
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
