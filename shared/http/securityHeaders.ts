import type { ServerResponse } from 'node:http';

/**
 * Headers every answer carries, whoever writes it (a route, an error, a system endpoint, the raw
 * answer to a request Node's parser refused): browsers never sniff a JSON body into something they
 * would run, and no cache keeps what the answer holds. Only a public catalogue read may be kept
 * (cacheControlOfPublicRead), and a route that serves one says so by being a public GET.
 */
export const SECURITY_HEADERS: readonly (readonly [string, string])[] = [
  ['X-Content-Type-Options', 'nosniff'],
  ['Cache-Control', 'no-store'],
];

/** Sets SECURITY_HEADERS on a response not yet under way (createHttpServer does it for every request). */
export function setSecurityHeaders(res: ServerResponse): void {
  for (const [name, value] of SECURITY_HEADERS) res.setHeader(name, value);
}

/** SECURITY_HEADERS as header lines of a response written straight to a socket. */
export const SECURITY_HEADER_LINES: readonly string[] = SECURITY_HEADERS.map(
  ([name, value]) => `${name}: ${value}`,
);

/**
 * The Cache-Control of a successful answer (undefined: none). Public catalogue data (a public GET)
 * keeps what its route chose (none for JSON: a weak ETag and If-None-Match do the work); asked for
 * with credentials it may depend on who asks (staff and uploaders see more), so no shared cache may
 * keep it, though the caller's own cache still revalidates with its ETag. Everything else (auth,
 * tokens, profile, file uploads: secrets and personal data) is never stored.
 */
export function cacheControlOf(
  publicRead: boolean,
  credentialed: boolean,
  chosen: string | undefined,
): string | undefined {
  if (!publicRead) return 'no-store';
  if (chosen !== undefined) return chosen;
  return credentialed ? 'private, no-cache' : undefined;
}
