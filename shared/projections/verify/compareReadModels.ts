import type { ClientBase } from 'pg';

/** One way a live table differs from its rebuilt copy. Values are PostgreSQL's text forms (null: SQL NULL). */
export type Difference =
  | {
      readonly kind: 'columns';
      readonly table: string;
      readonly live: readonly string[];
      readonly rebuilt: readonly string[];
    }
  | {
      readonly kind: 'differs';
      readonly table: string;
      readonly key: string;
      readonly column: string;
      readonly live: string | null;
      readonly rebuilt: string | null;
    }
  | { readonly kind: 'missing in live' | 'extra in live'; readonly table: string; readonly key: string };

/** Longest value shown in a difference; longer ones are cut, with their length. */
const SHOWN_VALUE_CHARS = 200;

const shown = (value: string | null): string => {
  if (value === null) return 'null';
  if (value.length <= SHOWN_VALUE_CHARS) return JSON.stringify(value);
  return `${JSON.stringify(value.slice(0, SHOWN_VALUE_CHARS))}... (${value.length} chars)`;
};

/** `<table>: row <key> differs: <column> live=<v> rebuilt=<v>`, `... missing in live`, `... extra in live`. */
export function formatDifference(d: Difference): string {
  switch (d.kind) {
    case 'columns':
      return `${d.table}: columns differ: live=(${d.live.join(', ')}) rebuilt=(${d.rebuilt.join(', ')})`;
    case 'differs':
      return `${d.table}: row ${d.key} differs: ${d.column} live=${shown(d.live)} rebuilt=${shown(d.rebuilt)}`;
    default:
      return `${d.table}: row ${d.key} ${d.kind}`;
  }
}

/** A physical table, read through a client that is inside a transaction (cursors need one). */
export interface TableSource {
  readonly client: ClientBase;
  /** Quoted, schema-qualified name. */
  readonly table: string;
}

export interface TableComparison {
  readonly liveRows: number;
  readonly rebuiltRows: number;
  readonly differences: number;
}

interface Column {
  readonly name: string;
  readonly type: string;
  /** Position in the primary key (0-based), or null outside it. */
  readonly keyPosition: number | null;
}

const INTEGER_TYPES = new Set(['smallint', 'integer', 'bigint']);
const FETCH_ROWS = 2000;

/**
 * Compares one table with its rebuilt copy row by row, in constant memory: both sides are read
 * through cursors ordered by the primary key (by every column where there is none) and merged.
 * Integer keys are ordered as numbers (the index serves the scan), any other key by its text form
 * in byte order (COLLATE "C"), which the merge reproduces exactly. Values are compared as text,
 * with the session settings that shape text output pinned on both sides. Calls `onDifference` for
 * each difference; `name` is the table's logical name in what it reports.
 */
export async function compareTable(
  name: string,
  live: TableSource,
  rebuilt: TableSource,
  onDifference: (difference: Difference) => void,
  signal?: AbortSignal,
): Promise<TableComparison> {
  const [liveColumns, rebuiltColumns] = await Promise.all([columnsOf(live), columnsOf(rebuilt)]);
  const signature = (columns: readonly Column[]): string[] =>
    columns.map((c) => `${c.name} ${c.type}${c.keyPosition === null ? '' : ' key'}`).sort();
  if (signature(liveColumns).join() !== signature(rebuiltColumns).join()) {
    onDifference({
      kind: 'columns',
      table: name,
      live: signature(liveColumns),
      rebuilt: signature(rebuiltColumns),
    });
    return { liveRows: 0, rebuiltRows: 0, differences: 1 };
  }
  const columns = rebuiltColumns;
  const keyed = columns.filter((c) => c.keyPosition !== null);
  const key = keyed.length > 0 ? keyed.sort((a, b) => a.keyPosition! - b.keyPosition!) : columns;
  const keyIndexes = key.map((k) => columns.indexOf(k));
  const compareKeys = keyComparator(key, keyIndexes);
  const showKey = (row: readonly (string | null)[]): string =>
    key.map((k, i) => `${k.name}=${row[keyIndexes[i]!] ?? 'null'}`).join(', ');

  const [liveRows, rebuiltRows] = [
    new RowCursor(live, columns, key, signal),
    new RowCursor(rebuilt, columns, key, signal),
  ];
  await Promise.all([liveRows.open(), rebuiltRows.open()]);
  let differences = 0;
  const report = (difference: Difference): void => {
    differences++;
    onDifference(difference);
  };
  try {
    let [l, r] = await Promise.all([liveRows.next(), rebuiltRows.next()]);
    while (l || r) {
      const order = !l ? 1 : !r ? -1 : compareKeys(l, r);
      if (order < 0) {
        report({ kind: 'extra in live', table: name, key: showKey(l!) });
        l = await liveRows.next();
      } else if (order > 0) {
        report({ kind: 'missing in live', table: name, key: showKey(r!) });
        r = await rebuiltRows.next();
      } else {
        columns.forEach((column, i) => {
          if (l![i] !== r![i])
            report({
              kind: 'differs',
              table: name,
              key: showKey(l!),
              column: column.name,
              live: l![i]!,
              rebuilt: r![i]!,
            });
        });
        [l, r] = await Promise.all([liveRows.next(), rebuiltRows.next()]);
      }
    }
  } finally {
    await Promise.all([liveRows.close(), rebuiltRows.close()]);
  }
  return { liveRows: liveRows.count, rebuiltRows: rebuiltRows.count, differences };
}

async function columnsOf({ client, table }: TableSource): Promise<Column[]> {
  const { rows } = await client.query<{ name: string; type: string; key_position: number | null }>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
            array_position(i.indkey::int2[], a.attnum) AS key_position
       FROM pg_attribute a
       LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
      WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attnum`,
    [table],
  );
  return rows.map((r) => ({ name: r.name, type: r.type, keyPosition: r.key_position }));
}

const quote = (identifier: string): string => `"${identifier.replaceAll('"', '""')}"`;
const isInteger = (column: Column): boolean => INTEGER_TYPES.has(column.type);

type Row = readonly (string | null)[];

function keyComparator(key: readonly Column[], indexes: readonly number[]): (a: Row, b: Row) => number {
  const parts = key.map((column, i) => {
    const index = indexes[i]!;
    const compareValues = isInteger(column) ? compareIntegers : compareBytes;
    return (a: Row, b: Row): number => {
      const [x, y] = [a[index]!, b[index]!];
      if (x === null || y === null) return x === y ? 0 : x === null ? -1 : 1; // NULLS FIRST
      return compareValues(x, y);
    };
  });
  return (a, b) => {
    for (const part of parts) {
      const order = part(a, b);
      if (order !== 0) return order;
    }
    return 0;
  };
}

function compareIntegers(x: string, y: string): number {
  if (x.length < 16 && y.length < 16) return Number(x) - Number(y);
  const [a, b] = [BigInt(x), BigInt(y)];
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Code units (JavaScript's `<`) order as UTF-8 bytes do, except from the surrogates up. */
const PAST_SURROGATES = /[\uD800-\uFFFF]/;

/** Byte order of the UTF-8 text, as COLLATE "C" orders it. */
function compareBytes(x: string, y: string): number {
  if (x === y) return 0;
  if (PAST_SURROGATES.test(x) || PAST_SURROGATES.test(y))
    return Buffer.compare(Buffer.from(x, 'utf8'), Buffer.from(y, 'utf8'));
  return x < y ? -1 : 1;
}

let cursorCount = 0;

/** Every row of a table as text values, in key order, fetched a few thousand at a time. */
class RowCursor {
  private readonly name = `verify_cursor_${++cursorCount}`;
  private buffer: Row[] = [];
  private at = 0;
  private pending: Promise<Row[]> | undefined;
  count = 0;

  constructor(
    private readonly source: TableSource,
    private readonly columns: readonly Column[],
    private readonly key: readonly Column[],
    private readonly signal: AbortSignal | undefined,
  ) {}

  async open(): Promise<void> {
    const { client, table } = this.source;
    // Text output must not depend on either session's settings.
    await client.query(
      `SET LOCAL timezone = 'UTC'; SET LOCAL datestyle = 'ISO, YMD'; SET LOCAL intervalstyle = 'postgres';
       SET LOCAL extra_float_digits = 1; SET LOCAL bytea_output = 'hex'`,
    );
    const values = this.columns.map((c) => `${quote(c.name)}::text`).join(', ');
    const order = this.key
      .map((c) => (isInteger(c) ? quote(c.name) : `${quote(c.name)}::text COLLATE "C"`) + ' NULLS FIRST')
      .join(', ');
    await client.query(
      `DECLARE ${this.name} NO SCROLL CURSOR FOR SELECT ${values} FROM ${table} ORDER BY ${order}`,
    );
    this.pending = this.fetch();
  }

  async next(): Promise<Row | undefined> {
    if (this.at >= this.buffer.length) {
      if (!this.pending) return undefined;
      this.signal?.throwIfAborted();
      this.buffer = await this.pending;
      this.at = 0;
      // The next rows are on their way while these are compared.
      this.pending = this.buffer.length < FETCH_ROWS ? undefined : this.fetch();
      if (this.buffer.length === 0) return undefined;
    }
    this.count++;
    return this.buffer[this.at++];
  }

  /** The next rows; a failure surfaces where they are awaited (never as an unhandled rejection). */
  private fetch(): Promise<Row[]> {
    const rows = this.source.client
      .query<(string | null)[]>({ text: `FETCH FORWARD ${FETCH_ROWS} FROM ${this.name}`, rowMode: 'array' })
      .then((result) => result.rows);
    rows.catch(() => undefined);
    return rows;
  }

  async close(): Promise<void> {
    await this.pending?.catch(() => undefined);
    await this.source.client.query(`CLOSE ${this.name}`).catch(() => undefined);
  }
}
