import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

/**
 * `COPY ... FROM STDIN` on a pg client (pg-copy-streams), fed line by line while the caller still
 * computes the rest: the server parses and stores the first rows while the caller hashes the next
 * ones. Rows go in COPY's text format (copyField escapes a value), or as bytes already cut into
 * pieces (binary COPY: BinaryCopyWriter). The first failure (a bad row, a constraint, a lost
 * connection) rejects `end()`; within a transaction it aborts that transaction as any failed
 * statement would.
 */
export interface CopyIn {
  /**
   * Queues text (whole lines, each ending in "\n"), sent in pieces of about CHUNK_CHARS; or a piece
   * of bytes, sent as it is (and no longer the caller's).
   */
  write(data: string | Buffer): void;
  /** Ends the data; resolves with the rows copied once the server has stored them all. */
  end(): Promise<number>;
}

/** Lines are sent in pieces of about this many characters (CopyData messages). */
const CHUNK_CHARS = 64 * 1024;

/** Starts `COPY <table> (<columns>) FROM STDIN` (text format) on `client`. */
export function copyIn(client: PoolClient, sql: string): CopyIn {
  const stream = client.query(copyFrom(sql));
  let failed = false;
  const done = new Promise<number>((resolve, reject) => {
    // 'finish' comes once the server has answered the end of the data (CommandComplete).
    stream.on('finish', () => resolve(stream.rowCount));
    stream.on('error', (error) => {
      failed = true;
      reject(error);
    });
  });
  // Rejected before end() is awaited (a failed COPY while rows are still computed): not unhandled.
  done.catch(() => undefined);
  let pending = '';
  return {
    write(data) {
      if (failed) return;
      if (typeof data !== 'string') {
        if (pending) stream.write(pending);
        pending = '';
        stream.write(data);
        return;
      }
      pending += data;
      if (pending.length < CHUNK_CHARS) return;
      stream.write(pending);
      pending = '';
    },
    end() {
      if (!failed) {
        if (pending) stream.write(pending);
        stream.end();
      }
      return done;
    },
  };
}

/** A value as one field of COPY's text format: \N for null or undefined, backslash, tab and line breaks escaped. */
export function copyField(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value !== 'string') return typeof value === 'boolean' ? (value ? 't' : 'f') : String(value);
  return NEEDS_ESCAPE.test(value) ? value.replace(ESCAPED, (c) => ESCAPES[c]!) : value;
}

const NEEDS_ESCAPE = /[\\\t\n\r]/;
const ESCAPED = /[\\\t\n\r]/g;
const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
