/**
 * If-None-Match: true when the list names the ETag or is "*". Weak comparison (RFC 9110 13.1.2),
 * so `W/"x"` matches `"x"`.
 */
export function noneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  const opaque = stripWeak(etag);
  return header.split(',').some((tag) => stripWeak(tag.trim()) === opaque);
}

/**
 * If-Range: the Range is honoured only when the client's validator is this strong ETag, so a
 * client resuming a download never splices bytes of two different files. A date, or a weak or
 * other tag, gets the whole representation.
 */
export function ifRangeHolds(header: string | undefined, etag: string): boolean {
  return header === undefined || header.trim() === etag;
}

function stripWeak(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}
