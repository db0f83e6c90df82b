export interface Column<T> {
  readonly header: string;
  readonly value: (row: T) => unknown;
  /**
   * What a narrow terminal drops first: the column with the highest number (default: its position,
   * so the rightmost goes first). The first column is never dropped.
   */
  readonly priority?: number;
}

/** Columns of text are two spaces apart. */
const GAP = 2;
/** A cell is cut to this many characters even on a wide terminal. */
const MAX_CELL = 60;
/** A shrunk column keeps at least this many characters (or its header's). */
const MIN_CELL = 10;
/** Columns are left out while the kept ones cannot each have this many characters (or their natural width). */
const COMFORTABLE_CELL = 18;

/**
 * The width tables must fit: COLUMNS when set (as shells export it), else the terminal's width when
 * stdout is one; unbounded for a pipe (scripts read --json, and grep wants whole cells).
 */
export function outputWidth(env: NodeJS.ProcessEnv = process.env, stdout = process.stdout): number {
  const columns = Number(env.COLUMNS);
  if (Number.isInteger(columns) && columns >= 20) return columns;
  if (stdout.isTTY && stdout.columns >= 20) return stdout.columns;
  return Number.POSITIVE_INFINITY;
}

/**
 * Column-aligned text without borders or colour (as `docker ps`): reads well and greps well. On a
 * narrow terminal the widest cells are cut with `…` and, when that is not enough, the least
 * important columns are left out (--json has everything).
 */
export function renderTable<T>(
  rows: readonly T[],
  columns: readonly Column<T>[],
  width = outputWidth(),
): string {
  const cells = rows.map((row) => columns.map((c) => cell(c.value(row))));
  const headers = columns.map((c) => c.header.toUpperCase());
  const kept = fit(
    columns.map((c, i) => ({
      index: i,
      priority: i === 0 ? Number.NEGATIVE_INFINITY : (c.priority ?? i),
      natural: Math.max(stringWidth(headers[i] ?? ''), ...cells.map((r) => stringWidth(r[i] ?? ''))),
      min: Math.min(
        Math.max(stringWidth(headers[i] ?? ''), MIN_CELL),
        Math.max(stringWidth(headers[i] ?? ''), ...cells.map((r) => stringWidth(r[i] ?? ''))),
      ),
    })),
    width,
  );
  const line = (values: readonly string[]) =>
    kept
      .map((k) => pad(elide(values[k.index] ?? '', k.width), k.width))
      .join(' '.repeat(GAP))
      .trimEnd();
  return [line(headers), ...cells.map(line)].join('\n');
}

/** A record shown as two columns, field and value (values cut to the width). */
export function renderRecord(fields: readonly [string, unknown][], width = outputWidth()): string {
  const nameWidth = Math.max(0, ...fields.map(([name]) => stringWidth(name)));
  const valueWidth = Math.max(MIN_CELL, width - nameWidth - GAP);
  return fields
    .map(([name, value]) =>
      `${pad(name, nameWidth)}${' '.repeat(GAP)}${elide(cell(value), valueWidth)}`.trimEnd(),
    )
    .join('\n');
}

/** Nested objects as dotted fields (`atlas.slug`), one level deep: what a reader scans for. */
export function flattenRecord(record: Record<string, unknown>): [string, unknown][] {
  return Object.entries(record).flatMap(([key, value]): [string, unknown][] =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.entries(value as Record<string, unknown>).map(([inner, v]) => [`${key}.${inner}`, v])
      : [[key, value]],
  );
}

interface Sizing {
  readonly index: number;
  readonly priority: number;
  readonly natural: number;
  readonly min: number;
}

/**
 * The columns kept and their widths: while even their minimums do not fit, the least important
 * column goes; then the widest columns give up characters, one at a time, down to their minimums.
 */
function fit(columns: readonly Sizing[], width: number): (Sizing & { width: number })[] {
  let kept = [...columns];
  const total = (list: readonly { w: number }[]) =>
    list.reduce((sum, c) => sum + c.w, 0) + GAP * (list.length - 1);
  const comfortable = (c: Sizing) => ({ w: Math.max(c.min, Math.min(c.natural, COMFORTABLE_CELL)) });
  while (kept.length > 1 && total(kept.map(comfortable)) > width) {
    const drop = kept.reduce((a, b) => (b.priority >= a.priority ? b : a));
    kept = kept.filter((c) => c !== drop);
  }
  const widths = kept.map((c) => ({ ...c, w: c.natural }));
  while (total(widths) > width) {
    const widest = widths
      .filter((c) => c.w > c.min)
      .reduce<(typeof widths)[number] | undefined>(
        (a, b) => (a === undefined || b.w > a.w ? b : a),
        undefined,
      );
    if (!widest) break;
    widest.w--;
  }
  return widths.map(({ w, ...c }) => ({ ...c, width: w }));
}

function cell(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '-');
  return elide(text.replace(/\s+/g, ' '), MAX_CELL);
}

/** Characters, as a terminal counts most of them (a code point each; the rare wide ones are not told apart). */
const stringWidth = (text: string): number => [...text].length;

/** Cuts text to `width` characters, the last one an ellipsis. */
function elide(text: string, width: number): string {
  const chars = [...text];
  return chars.length <= width ? text : `${chars.slice(0, Math.max(0, width - 1)).join('')}…`;
}

const pad = (text: string, width: number): string =>
  text + ' '.repeat(Math.max(0, width - stringWidth(text)));
