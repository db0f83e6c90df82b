/**
 * `as_of` of the detail routes (decisions.md "Audit"): an ISO time or an event position. The answer
 * is the representation right after the last event at or before that point, computed by replay.
 */
import { ValidationError } from '#shared/errors/httpErrors';
import {
  type GlobalPosition,
  type ReadStreamOptions,
  type RecordedEvent,
  comparePositions,
  parsePosition,
} from '#shared/eventStore/eventStore';

export type AsOf =
  | { readonly kind: 'position'; readonly position: GlobalPosition }
  | { readonly kind: 'time'; readonly time: Date };

/** An ISO 8601 date-time with a time zone (Z or ±hh:mm), or a date alone (midnight UTC). */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))?$/i;

export const AS_OF_MESSAGE = 'Enter an ISO 8601 date-time (e.g. 2026-01-31T12:00:00Z) or an event position.';

/** The parsed `as_of`, undefined when absent; a ValidationError (400 on `as_of`) when malformed. */
export function parseAsOf(value: unknown): AsOf | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '') throw ValidationError.field('as_of', AS_OF_MESSAGE);
  const text = value.trim();
  const position = parsePosition(text);
  if (position) return { kind: 'position', position: withinStoreRange(position) };
  if (ISO_TIME.test(text)) {
    const time = new Date(text);
    if (!Number.isNaN(time.getTime())) return { kind: 'time', time };
  }
  throw ValidationError.field('as_of', AS_OF_MESSAGE);
}

/**
 * A position as far as the stores can hold one (64-bit parts): beyond the newest event is "now",
 * before the first "nothing yet", so a point past either end names the same events as the end.
 */
const MAX_COMMIT = 2n ** 64n - 1n;
const MAX_PREPARE = 2n ** 63n - 1n;
const clamp = (value: bigint, min: bigint, max: bigint): bigint =>
  value < min ? min : value > max ? max : value;
const withinStoreRange = (p: GlobalPosition): GlobalPosition => ({
  commit: clamp(p.commit, -1n, MAX_COMMIT),
  prepare: clamp(p.prepare, -MAX_PREPARE - 1n, MAX_PREPARE),
});

/** readStream options that stop at the point. */
export function readUpTo(asOf: AsOf | undefined): ReadStreamOptions {
  if (!asOf) return {};
  return asOf.kind === 'position' ? { toPosition: asOf.position } : { toTime: asOf.time };
}

/** Whether an event is at or before the point (times at millisecond precision, as the store records them). */
export function isAtOrBefore(
  event: Pick<RecordedEvent, 'position' | 'metadata'>,
  asOf: AsOf | undefined,
): boolean {
  if (!asOf) return true;
  return asOf.kind === 'position'
    ? comparePositions(event.position, asOf.position) <= 0
    : Date.parse(event.metadata.recordedAt) <= asOf.time.getTime();
}

/** The header that names the position an "as of" answer stands at. */
export const AS_OF_POSITION_HEADER = 'X-As-Of-Position';
