/** How long bic waits before retrying: the server's Retry-After when it gives one, bounded. */
export const MAX_RETRY_AFTER_SECONDS = 60;

/** Seconds from a Retry-After header (delta-seconds or an HTTP date), else undefined. */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** The wait before attempt `attempt + 1`: Retry-After (capped), else exponential backoff from 0.5 s. */
export function retryDelayMs(attempt: number, retryAfter: number | undefined): number {
  if (retryAfter !== undefined) return Math.min(retryAfter, MAX_RETRY_AFTER_SECONDS) * 1000;
  return Math.min(500 * 2 ** (attempt - 1), 8000);
}
