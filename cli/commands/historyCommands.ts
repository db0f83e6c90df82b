import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { Page } from '#cli/api/resources';
import { type CliContext, requireToken } from '#cli/context';
import { CliError, ExitCode } from '#cli/exitCodes';
import { printJson } from '#cli/output/printJson';
import type { RunCommand } from './runCommand';

/*
 * A history as a reader scans it in a terminal of 80 columns: one line per event (when, who, what
 * happened to which resource), then one indented line per changed field (`name: "a" → "b"`; a
 * create's fields as `name = "a"`), each line cut to the width.
 */ export interface HistoryEntry {
  readonly position: string;
  readonly type: string;
  readonly resource: { readonly type: string; readonly id: number | string } | null;
  readonly recorded_at: string;
  readonly actor: { readonly id: number; readonly username: string | null } | null;
  readonly request_id?: string | null;
  readonly changes: Readonly<Record<string, readonly [unknown, unknown]>>;
}

export const HISTORY_WIDTH = 80;

const value = (v: unknown): string => (v === undefined ? 'null' : (JSON.stringify(v) ?? 'null'));

function fit(line: string, width: number): string {
  const flat = line.replace(/\s+$/, '');
  return flat.length > width ? `${flat.slice(0, width - 1)}…` : flat;
}

/** "2026-01-31 12:00:05Z" from an ISO time (milliseconds dropped: the position orders events). */
const when = (iso: string): string => `${iso.slice(0, 10)} ${iso.slice(11, 19)}Z`;

const who = (entry: HistoryEntry): string =>
  entry.actor === null ? 'system' : (entry.actor.username ?? `user ${entry.actor.id}`);

/** A short name for the resource ("file_upload 3f2a…" keeps the UUID's first block). */
function what(entry: HistoryEntry): string {
  if (entry.resource === null) return '';
  const id = String(entry.resource.id);
  return `${entry.resource.type} ${/^[0-9a-f-]{36}$/i.test(id) ? `${id.slice(0, 8)}…` : id}`;
}

function changeLines(changes: HistoryEntry['changes']): string[] {
  const fields = Object.entries(changes);
  if (fields.length === 0) return ['(no change to what it shows)'];
  // A create lists every field with null before, the id among them (no change ever sets an id).
  const created = changes.id !== undefined && changes.id[0] === null;
  return fields.map(([field, [before, after]]) =>
    created ? `${field} = ${value(after)}` : `${field}: ${value(before)} → ${value(after)}`,
  );
}

export function renderHistory(entries: readonly HistoryEntry[], width = HISTORY_WIDTH): string {
  if (entries.length === 0) return '(no events)';
  const lines: string[] = [];
  for (const entry of entries) {
    lines.push(fit(`${when(entry.recorded_at)}  ${who(entry)}  ${entry.type}  ${what(entry)}`, width));
    for (const change of changeLines(entry.changes)) lines.push(fit(`    ${change}`, width));
  }
  return lines.join('\n');
}

/** What a history can be of, and its route (decisions.md "Audit", History). */
const HISTORY_PATHS = {
  brain: (key: string) => `/api/brains/${encodeURIComponent(key)}/history/`,
  upload: (key: string) => `/api/file-uploads/${encodeURIComponent(key)}/history/`,
  category: (key: string) => `/api/categories/${encodeURIComponent(key)}/history/`,
  species: (key: string) => `/api/species/${encodeURIComponent(key)}/history/`,
  atlas: (key: string) => `/api/atlases/${encodeURIComponent(key)}/history/`,
  me: () => '/api/auth/me/history/',
} as const;
type HistoryOf = keyof typeof HISTORY_PATHS;

const historyOf = (raw: string): HistoryOf => {
  if (!Object.hasOwn(HISTORY_PATHS, raw))
    throw new InvalidArgumentError(Object.keys(HISTORY_PATHS).join(', '));
  return raw as HistoryOf;
};

/** The server's largest page: a long history comes in few requests. */
const PAGE_SIZE = 100;
/** A bound on the pages followed (100,000 events), should a server keep answering `next`. */
const MAX_PAGES = 1000;

interface HistoryOptions {
  of: HistoryOf;
  json?: boolean;
}

export function historyCommands(program: Command, run: RunCommand): void {
  program
    .command('history')
    .description('who changed what and when, event by event (staff, or the uploader / creator)')
    .argument('[key]', 'brain id or readable id (or, with --of, an upload id, category name, …)')
    .option('--of <what>', `what KEY names: ${Object.keys(HISTORY_PATHS).join(', ')}`, historyOf, 'brain')
    .option('--json', 'print the entries as one JSON array')
    .addHelpText(
      'after',
      '\nExamples:\n  bic history mouse-p56-42\n  bic history 3f2a… --of upload\n  bic history --of me',
    )
    .action(run(showHistory));
}

/** Every entry of a history, oldest first, following the pages. */
export async function fetchHistory(ctx: CliContext, path: string): Promise<HistoryEntry[]> {
  const entries: HistoryEntry[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const body = await ctx.api.json<Page<HistoryEntry>>({
      method: 'GET',
      path,
      query: { page, page_size: PAGE_SIZE },
    });
    entries.push(...body.results);
    if (body.next === null) return entries;
  }
  throw new CliError(`the history has more than ${MAX_PAGES * PAGE_SIZE} events`, ExitCode.failure);
}

async function showHistory(ctx: CliContext, opts: HistoryOptions, key?: string): Promise<void> {
  requireToken(ctx);
  if (opts.of !== 'me' && (key === undefined || key === ''))
    throw new CliError(`give the ${opts.of}'s key (or --of me)`, ExitCode.usage);
  const entries = await fetchHistory(ctx, HISTORY_PATHS[opts.of](key ?? ''));
  if (opts.json) return printJson(ctx, entries);
  ctx.print(renderHistory(entries));
}
