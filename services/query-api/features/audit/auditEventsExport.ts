import { Readable } from 'node:stream';
import type { Pool } from 'pg';
import type { Logger } from '#shared/logging/logger';
import type { EventLogFilter } from './auditEventsFilter';
import { type SeqBounds, ndjsonPage } from './auditEventsQuery';

/** Rows per keyset page of an export: one query, one chunk written to the response. */
export const EXPORT_PAGE_ROWS = 2000;

export interface ExportOptions {
  /** The most events to stream (the request's `limit`), if any. */
  readonly limit?: number;
  readonly pageRows?: number;
  readonly logger?: Logger;
  readonly requestId: string;
}

/**
 * Every matching event up to the head at the time of the request, one JSON entry per line, read in
 * keyset pages by seq. Constant memory: a page is read only when the response has taken the one
 * before (the stream buffers one chunk, and piping stops at the socket's high-water mark until
 * 'drain'); a client that goes away destroys the stream, which ends the loop. No connection or
 * transaction is held between pages.
 */
export function exportStream(
  pool: Pool,
  filter: EventLogFilter,
  bounds: SeqBounds,
  options: ExportOptions,
): Readable {
  const pageRows = options.pageRows ?? EXPORT_PAGE_ROWS;
  async function* lines(): AsyncGenerator<string> {
    let from = bounds.after;
    let left = options.limit ?? Number.POSITIVE_INFINITY;
    let written = 0;
    try {
      while (left > 0) {
        const want = Math.min(pageRows, left);
        const page = await ndjsonPage(pool, filter, bounds, { from, limit: want, upTo: bounds.head });
        if (page.count === 0) return;
        yield page.text;
        written += page.count;
        left -= page.count;
        from = page.lastSeq;
        if (page.count < want) return;
      }
    } catch (error) {
      // Before the first line the error middleware answers (and logs) a 500. After it the status is
      // out: the connection is cut, and this is the only trace.
      if (written > 0)
        options.logger?.error('event log export failed', { request_id: options.requestId, written, error });
      throw error;
    }
  }
  return Readable.from(lines(), { objectMode: false, highWaterMark: 1 });
}
