import type { PoolClient } from 'pg';

/**
 * `COPY ... FROM STDIN` on a pg client, fed line by line while the caller still computes the rest:
 * the server parses and stores the first rows while the caller hashes the next ones. Rows go in
 * COPY's text format (copyField escapes a value). The first failure (a bad row, a constraint, a
 * lost connection) rejects `end()`; within a transaction it aborts that transaction as any failed
 * statement would.
 *
 * pg has no COPY of its own: this is a "submittable" (what pg's Client.query accepts besides a
 * query), answering the few protocol messages of a COPY FROM issued as a simple query.
 */
export interface CopyIn {
  /** Queues text (whole lines, each ending in "\n"); sent as soon as the server accepts data. */
  write(text: string): void;
  /** Ends the data; resolves with the rows copied once the server has stored them all. */
  end(): Promise<number>;
}

/** Lines are sent in pieces of about this many characters (CopyData messages). */
const CHUNK_CHARS = 64 * 1024;

interface CopyConnection {
  query(text: string): void;
  sendCopyFromChunk(chunk: Buffer): void;
  endCopyFrom(): void;
}

class CopyInQuery {
  private connection: CopyConnection | undefined;
  private accepting = false;
  private ended = false;
  private settled = false;
  private pending = '';
  private rowCount = 0;
  private failure: Error | undefined;
  private resolve: (rows: number) => void = () => undefined;
  private reject: (error: Error) => void = () => undefined;
  readonly done = new Promise<number>((resolve, reject) => {
    this.resolve = resolve;
    this.reject = reject;
  });

  constructor(readonly text: string) {
    // Rejected before end() is awaited (a failed COPY while rows are still computed): not unhandled.
    this.done.catch(() => undefined);
  }

  // --- the caller's side

  write(text: string): void {
    if (this.failure || this.ended) return;
    this.pending += text;
    if (this.accepting && this.pending.length >= CHUNK_CHARS) this.flush();
  }

  end(): Promise<number> {
    this.ended = true;
    if (this.accepting) this.finish();
    return this.done;
  }

  // --- pg's side (called by the client while this is its active query)

  submit(connection: CopyConnection): void {
    this.connection = connection;
    connection.query(this.text);
  }

  handleCopyInResponse(): void {
    this.accepting = true;
    if (this.ended) this.finish();
    else if (this.pending.length >= CHUNK_CHARS) this.flush();
  }

  handleCommandComplete(message: { text?: string }): void {
    const match = /^COPY (\d+)/.exec(message.text ?? '');
    if (match) this.rowCount = Number(match[1]);
  }

  handleReadyForQuery(): void {
    this.settle();
  }

  handleError(error: Error): void {
    this.failure ??= error;
    this.accepting = false;
    this.pending = '';
    // pg forgets this query on an error: no ReadyForQuery will reach it.
    this.settle();
  }

  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyData(): void {}

  private flush(): void {
    if (this.pending.length === 0) return;
    this.connection!.sendCopyFromChunk(Buffer.from(this.pending, 'utf8'));
    this.pending = '';
  }

  private finish(): void {
    this.flush();
    this.accepting = false;
    this.connection!.endCopyFrom();
  }

  private settle(): void {
    if (this.settled) return;
    this.settled = true;
    if (this.failure) this.reject(this.failure);
    else this.resolve(this.rowCount);
  }
}

/** Starts `COPY <table> (<columns>) FROM STDIN` (text format) on `client`. */
export function copyIn(client: PoolClient, sql: string): CopyIn {
  const query = new CopyInQuery(sql);
  // pg accepts any object with submit(); its typings want pg's own Submittable shape.
  void client.query(query as unknown as Parameters<PoolClient['query']>[0]);
  return query;
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
