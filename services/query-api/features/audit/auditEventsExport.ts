import { Readable } from 'node:stream';
import type { Pool } from 'pg';
import type { Logger } from '#shared/logging/logger';
import type { EventLogFilter } from './auditEventsFilter';
import { type NdjsonPage, type SeqBounds, ndjsonPage } from './auditEventsQuery';

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
 * keyset pages by seq. Constant memory: at most a page being sent and the next one read ahead (the
 * stream buffers one chunk, and piping stops at the socket's high-water mark until 'drain'); a
 * client that goes away destroys the stream, which ends the loop. No connection or transaction is
 * held between pages.
 */
export function exportStream(
  pool: Pool,
  filter: EventLogFilter,
  bounds: SeqBounds,
  options: ExportOptions,
): Readable {
  const pageRows = options.pageRows ?? EXPORT_PAGE_ROWS;
  const fetchPage = (from: number, limit: number): Promise<NdjsonPage> => {
    const page = ndjsonPage(pool, filter, bounds, { from, limit, upTo: bounds.head });
    void page.catch(() => undefined); // awaited below, or dropped when the client went away first
    return page;
  };
  async function* lines(): AsyncGenerator<Buffer> {
    let left = options.limit ?? Number.POSITIVE_INFINITY;
    let want = Math.min(pageRows, left);
    // One page read ahead: the database reads the next page while this one is being sent.
    let next: Promise<NdjsonPage> | undefined = fetchPage(bounds.after, want);
    let written = 0;
    try {
      while (next) {
        const page: NdjsonPage = await next;
        left -= page.count;
        const more: boolean = page.count === want && left > 0;
        want = Math.min(pageRows, left);
        next = more ? fetchPage(page.lastSeq, want) : undefined;
        if (page.count === 0) return;
        yield page.bytes;
        written += page.count;
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
