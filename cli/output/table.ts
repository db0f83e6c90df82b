import Table from 'cli-table3';

export interface Column<T> {
  readonly header: string;
  readonly value: (row: T) => unknown;
}

/** Column-aligned text without borders or colour (as `docker ps`): reads well and greps well. */
export function renderTable<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  const table = new Table({ head: columns.map((c) => c.header.toUpperCase()), ...PLAIN });
  for (const row of rows) table.push(columns.map((c) => cell(c.value(row))));
  return trimLines(table.toString());
}

/** A record shown as two columns, field and value. */
export function renderRecord(fields: readonly [string, unknown][]): string {
  const table = new Table(PLAIN);
  for (const [name, value] of fields) table.push([name, cell(value)]);
  return trimLines(table.toString());
}

/** Nested objects as dotted fields (`atlas.slug`), one level deep: what a reader scans for. */
export function flattenRecord(record: Record<string, unknown>): [string, unknown][] {
  return Object.entries(record).flatMap(([key, value]): [string, unknown][] =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.entries(value as Record<string, unknown>).map(([inner, v]) => [`${key}.${inner}`, v])
      : [[key, value]],
  );
}

const MAX_CELL = 60;

function cell(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '-');
  const line = text.replace(/\s+/g, ' ');
  return line.length > MAX_CELL ? `${line.slice(0, MAX_CELL - 1)}…` : line;
}

const trimLines = (text: string): string =>
  text
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n');

const NO_BORDER = Object.fromEntries(
  [
    'top',
    'top-mid',
    'top-left',
    'top-right',
    'bottom',
    'bottom-mid',
    'bottom-left',
    'bottom-right',
    'left',
    'left-mid',
    'mid',
    'mid-mid',
    'right',
    'right-mid',
    'middle',
  ].map((name) => [name, '']),
);

const PLAIN = {
  chars: NO_BORDER,
  style: { head: [], border: [], 'padding-left': 0, 'padding-right': 2 },
};
