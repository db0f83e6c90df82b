/** What a Range header asks of a representation of `size` bytes (RFC 9110 section 14). */
export type RequestedRange =
  | { readonly kind: 'whole' }
  | { readonly kind: 'part'; readonly start: number; readonly end: number }
  | { readonly kind: 'unsatisfiable' };

const WHOLE: RequestedRange = { kind: 'whole' };
const UNSATISFIABLE: RequestedRange = { kind: 'unsatisfiable' };
const SPEC = /^(\d*)-(\d*)$/;

/**
 * One byte range (`bytes=0-99`, `bytes=100-`, `bytes=-100`), its end clamped to the last byte.
 * A header that is absent, malformed, of another unit, or asks for several ranges is answered
 * with the whole representation, as RFC 9110 lets a server ignore a Range it does not serve;
 * a well-formed range that starts past the end (or any range of an empty one) is unsatisfiable.
 */
export function requestedRange(header: string | undefined, size: number): RequestedRange {
  if (header === undefined) return WHOLE;
  const match = /^bytes=(.*)$/i.exec(header.trim());
  if (!match) return WHOLE;
  const specs = match[1]!.split(',').map((spec) => spec.trim());
  if (specs.length !== 1) return WHOLE;
  const parts = SPEC.exec(specs[0]!);
  if (!parts) return WHOLE;
  const [, first = '', last = ''] = parts;
  if (first === '' && last === '') return WHOLE;
  if (first === '') return suffix(Number(last), size);
  const start = Number(first);
  const end = last === '' ? Number.POSITIVE_INFINITY : Number(last);
  if (!Number.isSafeInteger(start) || end < start) return WHOLE;
  if (start >= size) return UNSATISFIABLE;
  return { kind: 'part', start, end: Math.min(end, size - 1) };
}

/** `bytes=-n`: the last n bytes (all of them when n is larger). */
function suffix(length: number, size: number): RequestedRange {
  if (!Number.isFinite(length)) return WHOLE;
  if (length === 0 || size === 0) return UNSATISFIABLE;
  return { kind: 'part', start: Math.max(0, size - length), end: size - 1 };
}
