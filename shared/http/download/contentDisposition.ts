/**
 * `attachment` with the file name in both forms of RFC 6266: `filename` in plain ASCII for old
 * clients (anything else, and the quote and backslash, replaced by "_"), and `filename*` in
 * UTF-8 per RFC 8187 (5987) for the rest.
 */
export function attachmentDisposition(filename: string, fallback = 'download'): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_').trim() || fallback;
  const encoded = encodeURIComponent(filename || fallback).replace(
    /['()*!]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
