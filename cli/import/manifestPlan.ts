import { stat } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { type Catalogue, resolvePlacement } from './catalogue';
import {
  type ImportDefaults,
  type ImportPlan,
  type PlanIssue,
  type PlannedScan,
  visibilityFields,
} from './importPlan';
import { nameFromFile, portablePath, scanExtension } from './scanFormats';

/** The columns a manifest may have; `file` is the one it must have. */
export const MANIFEST_COLUMNS = [
  'file',
  'name',
  'atlas',
  'category',
  'species',
  'description',
  'is_reference',
  'visibility',
  'embargo_until',
  'extra_link',
  'website',
  'color',
] as const;

type Column = (typeof MANIFEST_COLUMNS)[number];

/** One data row: its line in the file (the header is line 1) and its cells by column. */
export interface ManifestRow {
  readonly line: number;
  readonly cells: Readonly<Partial<Record<Column, string>>>;
}

const MAX_ROWS = 100_000;
const TRUE = new Set(['true', 'yes', 'y', '1']);
const FALSE = new Set(['false', 'no', 'n', '0', '']);
const VISIBILITIES = new Set(['public', 'private', 'embargoed']);

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** An embargo date as `--embargo-until` reads it: YYYY-MM-DD is midnight UTC; an ISO time as given. */
function embargoDate(raw: string): string {
  const text = raw.trim();
  const ms =
    DAY.test(text) || ISO_TIME.test(text)
      ? Date.parse(DAY.test(text) ? `${text}T00:00:00Z` : text.replace(' ', 'T'))
      : NaN;
  if (Number.isNaN(ms)) throw new Error('a date (YYYY-MM-DD) or an ISO 8601 time (2027-01-31T12:00:00Z)');
  return new Date(ms).toISOString();
}

/** The rows of a manifest (CSV, header first), or what is wrong with its shape. */
export function parseManifest(text: string): { rows: ManifestRow[]; issues: PlanIssue[] } {
  const issues: PlanIssue[] = [];
  let records: { record: Record<string, string>; info: { lines: number; error?: unknown } }[];
  let header: string[] = [];
  try {
    records = parse(text, {
      bom: true,
      columns: (names: string[]) => (header = names.map((n) => n.trim().toLowerCase())),
      info: true,
      relax_column_count: true,
      skip_empty_lines: true,
      trim: true,
    });
  } catch (error) {
    return {
      rows: [],
      issues: [{ row: 0, column: 'file', message: `not a CSV file: ${(error as Error).message}` }],
    };
  }
  const unknown = header.filter((name) => !(MANIFEST_COLUMNS as readonly string[]).includes(name));
  for (const name of unknown)
    issues.push({
      row: 1,
      column: name || '(blank)',
      message: `unknown column (columns: ${MANIFEST_COLUMNS.join(', ')})`,
    });
  if (!header.includes('file'))
    issues.push({ row: 1, column: 'file', message: 'the manifest has no file column' });
  const repeated = header.filter((name, i) => header.indexOf(name) !== i);
  for (const name of new Set(repeated)) issues.push({ row: 1, column: name, message: 'column given twice' });
  if (records.length > MAX_ROWS)
    issues.push({ row: 0, column: 'file', message: `more than ${MAX_ROWS} rows: split the manifest` });
  if (issues.length > 0) return { rows: [], issues };
  if (records.length === 0) issues.push({ row: 2, column: 'file', message: 'the manifest has no rows' });
  const rows = records.map(({ record, info }): ManifestRow => {
    const count = Object.keys(record).length;
    if (info.error !== undefined || count !== header.length)
      issues.push({
        row: info.lines,
        column: 'file',
        message: `${count} cells where the header has ${header.length} columns`,
      });
    return { line: info.lines, cells: record };
  });
  return { rows, issues };
}

/**
 * Validates every row against the disk and the catalogue (each distinct atlas, category and species
 * asked once) and plans the ones that are right. The caller sends nothing while any issue remains.
 */
export async function manifestPlan(
  manifestFile: string,
  text: string,
  defaults: ImportDefaults,
  catalogue: Catalogue,
  now = Date.now(),
): Promise<ImportPlan> {
  const root = path.dirname(path.resolve(manifestFile));
  const parsed = parseManifest(text);
  const issues = [...parsed.issues];
  const planned: { line: number; scan: PlannedScan }[] = [];
  const files = new Map<string, number>();
  const names = new Map<string, number>();
  await Promise.all(
    parsed.rows.map(async (row) => {
      const found = await checkRow(row, root, defaults, catalogue, now);
      issues.push(...found.issues);
      if (found.scan) planned.push({ line: row.line, scan: found.scan });
    }),
  );
  // Duplicates, reported on the later row, in file order.
  for (const row of parsed.rows) {
    const cells = row.cells;
    if (cells.file) {
      const key = path.resolve(root, cells.file);
      const first = files.get(key);
      if (first !== undefined)
        issues.push({ row: row.line, column: 'file', message: `the same file as row ${first}` });
      else files.set(key, row.line);
    }
    const name = (cells.name || (cells.file ? nameFromFile(cells.file) : '')).toLowerCase();
    if (name) {
      const first = names.get(name);
      if (first !== undefined)
        issues.push({ row: row.line, column: 'name', message: `the same name as row ${first}` });
      else names.set(name, row.line);
    }
  }
  issues.sort((a, b) => a.row - b.row || a.column.localeCompare(b.column));
  const bad = new Set(issues.map((issue) => issue.row));
  const scans = planned
    .filter((p) => !bad.has(p.line))
    .sort((a, b) => a.line - b.line)
    .map((p) => p.scan);
  return { kind: 'manifest', root, identity: `manifest:${path.basename(root)}`, scans, issues };
}

async function checkRow(
  row: ManifestRow,
  root: string,
  defaults: ImportDefaults,
  catalogue: Catalogue,
  now: number,
): Promise<{ issues: PlanIssue[]; scan?: PlannedScan }> {
  const issues: PlanIssue[] = [];
  const cells = row.cells;
  const fail = (column: string, message: string) => void issues.push({ row: row.line, column, message });
  const file = cells.file ?? '';
  let info: { size: number; mtimeMs: number } | undefined;
  if (file === '') fail('file', 'required');
  else if (!scanExtension(file)) fail('file', 'not a supported scan (.nii, .nii.gz, .zarr zip, .tif, .tiff)');
  else {
    try {
      const found = await stat(path.resolve(root, file));
      if (found.isFile()) info = found;
      else fail('file', `${file} is not a regular file`);
    } catch {
      fail('file', `no file ${file} (relative to ${root})`);
    }
  }
  const name = cells.name || (file ? nameFromFile(file) : '');
  if (name.length > 200) fail('name', 'longer than 200 characters');
  const description = cells.description || defaults.description;
  if (description !== undefined && description.length > 5000)
    fail('description', 'longer than 5000 characters');
  const isReference = (cells.is_reference ?? '').toLowerCase();
  if (!TRUE.has(isReference) && !FALSE.has(isReference))
    fail('is_reference', 'not a boolean (true or false)');
  const visibility = (cells.visibility || defaults.visibility || '').toLowerCase() || undefined;
  if (visibility !== undefined && !VISIBILITIES.has(visibility))
    fail('visibility', 'one of public, private, embargoed');
  let embargoUntil = defaults.embargoUntil;
  if (cells.embargo_until) {
    try {
      embargoUntil = embargoDate(cells.embargo_until);
      if (Date.parse(embargoUntil) <= now) fail('embargo_until', 'not in the future');
    } catch (error) {
      fail('embargo_until', (error as Error).message);
    }
  }
  if (visibility === 'embargoed' && embargoUntil === undefined)
    fail('embargo_until', 'required with embargoed');
  if (
    embargoUntil !== undefined &&
    cells.embargo_until &&
    visibility !== undefined &&
    visibility !== 'embargoed'
  )
    fail('embargo_until', `given with visibility ${visibility}`);
  for (const column of ['extra_link', 'website'] as const) {
    const url = cells[column];
    if (url && !isHttpUrl(url)) fail(column, 'not an http(s) URL');
  }
  const color = cells.color ?? '';
  if (color !== '' && !/^#([0-9a-f]{3}|[0-9a-f]{6})$/i.test(color))
    fail('color', 'not a colour (#rrggbb or #rgb)');
  const placement = await resolvePlacement(catalogue, {
    atlas: cells.atlas || (cells.category ? undefined : defaults.atlas),
    category: cells.category || (cells.atlas ? undefined : defaults.category),
    species: cells.species || defaults.species,
  });
  if (!('ok' in placement)) fail(placement.column, placement.message);
  if (issues.length > 0 || !info || !('ok' in placement)) return { issues };
  const absolute = path.resolve(root, file);
  const embargoed = visibility === 'embargoed' || (visibility === undefined && embargoUntil !== undefined);
  return {
    issues,
    scan: {
      file: absolute,
      relativePath: portablePath(path.relative(root, absolute)),
      size: info.size,
      mtimeMs: info.mtimeMs,
      fields: {
        name,
        atlas: placement.ok.atlas === undefined ? undefined : String(placement.ok.atlas),
        category: placement.ok.category === undefined ? undefined : String(placement.ok.category),
        description: description || undefined,
        is_reference: TRUE.has(isReference) ? 'true' : undefined,
        extra_link: cells.extra_link || undefined,
        website: cells.website || undefined,
        color: color || undefined,
        ...(embargoed ? visibilityFields('embargoed', embargoUntil) : { visibility }),
      },
    },
  };
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
