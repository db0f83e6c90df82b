import { createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type { Command } from 'commander';
import type { Query } from '#cli/api/apiClient';
import { type CliContext, requireToken } from '#cli/context';
import { CliError, ExitCode } from '#cli/exitCodes';
import { printJson } from '#cli/output/printJson';
import { positiveInt } from './listing';
import type { RunCommand } from './runCommand';

const EVENTS_PATH = '/api/audit/events/';
/** The server's page bounds (decisions.md "Audit"). */
const SERVER_MAX_LIMIT = 1000;
const SERVER_DEFAULT_LIMIT = 100;
const TABLE_WIDTH = 80;

/** An entry of the event log, as bic reads it. */
export interface AuditEntry {
  readonly position: string;
  readonly type: string;
  readonly resource: { readonly type: string; readonly id: number | string } | null;
  readonly recorded_at: string;
  readonly actor: { readonly id: number; readonly username: string | null } | null;
  readonly [field: string]: unknown;
}

interface EventLogPage {
  readonly results: AuditEntry[];
  readonly next: string | null;
}

interface EventsOptions {
  resourceType?: string;
  resourceId?: string;
  type?: string;
  actor?: string;
  requestId?: string;
  since?: string;
  until?: string;
  after?: string;
  limit?: string;
  includeInternal?: boolean;
  json?: boolean;
  ndjson?: string;
  force?: boolean;
}

export function auditCommands(program: Command, run: RunCommand): void {
  const audit = program.command('audit').description('the event log (staff)');
  audit
    .command('events')
    .description(
      'events in global order, oldest first: one page (100) by default; --limit N follows the pages up to N events',
    )
    .option('--resource-type <type>', 'user, token, category, species, atlas, brain or file_upload')
    .option('--resource-id <id>', "the resource's id (with --resource-type)")
    .option('--type <types>', 'event types, comma-separated (e.g. BrainCreated,BrainUpdated)')
    .option('--actor <user-id>', 'events caused by this user')
    .option('--request-id <id>', 'events appended by this request')
    .option('--since <time>', 'recorded at or after this ISO 8601 time')
    .option('--until <time>', 'recorded before this ISO 8601 time')
    .option('--after <position>', 'start right after this event position')
    .option('--limit <n>', 'at most this many events (pages followed as needed)', positiveInt)
    .option('--include-internal', 'include write-side bookkeeping (reservations, id allocation, token use)')
    .option('--json', 'print {"results", "next"} as JSON')
    .option('--ndjson <file>', 'stream every matching event to FILE, one JSON entry per line')
    .option('--force', 'overwrite the --ndjson file')
    .action(run(events));
}

function filters(opts: EventsOptions): Query {
  return {
    resource_type: opts.resourceType,
    resource_id: opts.resourceId,
    type: opts.type,
    actor: opts.actor,
    request_id: opts.requestId,
    since: opts.since,
    until: opts.until,
    after: opts.after,
    include_internal: opts.includeInternal ? 'true' : undefined,
  };
}

async function events(ctx: CliContext, opts: EventsOptions): Promise<void> {
  requireToken(ctx);
  if (opts.ndjson !== undefined) {
    if (opts.json) throw new CliError('--json and --ndjson: give one', ExitCode.usage);
    return exportEvents(ctx, opts, opts.ndjson);
  }
  const wanted = opts.limit === undefined ? SERVER_DEFAULT_LIMIT : Number(opts.limit);
  const results: AuditEntry[] = [];
  let query: Query = { ...filters(opts) };
  let next: string | null;
  do {
    query = { ...query, limit: Math.min(SERVER_MAX_LIMIT, wanted - results.length) };
    const page = await ctx.api.json<EventLogPage>({ method: 'GET', path: EVENTS_PATH, query });
    results.push(...page.results);
    next = page.next;
    if (next) query = { ...query, after: new URL(next).searchParams.get('after') ?? undefined };
  } while (next && results.length < wanted);
  if (opts.json) return printJson(ctx, { results, next });
  ctx.print(renderEvents(results));
  const last = results[results.length - 1];
  if (next && last) ctx.notice(`more events follow: add --after ${last.position} for the next ones`);
}

/** `2026-01-31T12:00:00.123Z` → `2026-01-31 12:00:00` (UTC, as the header says). */
const shortTime = (iso: string): string => iso.replace('T', ' ').slice(0, 19);

/** `file_upload:1f0c…` (a UUID cut to its first 8 digits) or `brain:12`. */
function shortResource(resource: AuditEntry['resource']): string {
  if (!resource) return '-';
  const id = String(resource.id);
  return `${resource.type}:${/^[0-9a-f]{8}-/.test(id) ? id.slice(0, 8) : id}`;
}

const fit = (text: string, width: number): string =>
  text.length <= width ? text.padEnd(width) : `${text.slice(0, width - 1)}…`;

/**
 * POSITION, TIME (UTC), TYPE, RESOURCE, ACTOR within 80 columns: the position and time whole (the
 * position is what --after takes), the type, resource and actor cut with … when the line is wider.
 */
export function renderEvents(entries: readonly AuditEntry[]): string {
  const rows = entries.map((e) => [
    e.position,
    shortTime(e.recorded_at),
    e.type,
    shortResource(e.resource),
    e.actor ? (e.actor.username ?? `#${e.actor.id}`) : 'system',
  ]);
  const headers = ['POSITION', 'TIME (UTC)', 'TYPE', 'RESOURCE', 'ACTOR'];
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const minimum = [0, 0, 12, 10, 6];
  // Narrow the widest shrinkable column until the line fits (one space between columns).
  const total = (): number => widths.reduce((a, b) => a + b, 0) + widths.length - 1;
  while (total() > TABLE_WIDTH) {
    const shrinkable = [2, 3, 4].filter((i) => widths[i]! > minimum[i]!);
    if (shrinkable.length === 0) break;
    const widest = shrinkable.reduce((a, b) => (widths[b]! > widths[a]! ? b : a));
    widths[widest]!--;
  }
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => fit(c, widths[i]!))
      .join(' ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/**
 * --ndjson FILE: the server's export streamed to FILE (through FILE.part, renamed once complete),
 * never held in memory, with a progress line on stderr: events written and their rate. The server
 * caps `limit` at 1000; a larger --limit is applied here, by stopping after that many lines.
 */
async function exportEvents(ctx: CliContext, opts: EventsOptions, file: string): Promise<void> {
  const exists = await stat(file).then(
    () => true,
    () => false,
  );
  if (exists && !opts.force)
    throw new CliError(`${file} already exists (--force to overwrite)`, ExitCode.failure);
  const limit = opts.limit === undefined ? undefined : Number(opts.limit);
  const response = await ctx.api.send({
    method: 'GET',
    path: EVENTS_PATH,
    query: { ...filters(opts), limit: limit !== undefined && limit <= SERVER_MAX_LIMIT ? limit : undefined },
    headers: { Accept: 'application/x-ndjson' },
    timeoutMs: null,
  });
  const part = `${file}.part`;
  const started = performance.now();
  let written = 0;
  let shown = 0;
  const rate = (): number => Math.round(written / Math.max((performance.now() - started) / 1000, 0.001));
  const progress = (final = false): void => {
    const now = performance.now();
    if (!final && now - shown < (ctx.interactive ? 250 : 5000)) return;
    shown = now;
    const text = `${written} events written, ${rate()} events/s`;
    if (ctx.interactive) ctx.stderr.write(`\r${text}${final ? '\n' : ''}`);
    else ctx.notice(text);
  };
  const out = createWriteStream(part, { mode: 0o644 });
  try {
    // for await: one chunk at a time, the next read only once the file has taken this one.
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      let end = chunk.length;
      for (let i = 0; i < chunk.length && written !== limit; i++) {
        if (chunk[i] !== 10) continue;
        written++;
        end = i + 1;
      }
      if (written !== limit) end = chunk.length;
      if (!out.write(chunk.subarray(0, end))) await once(out, 'drain');
      progress();
      if (written === limit) break; // leaving the loop cancels the rest of the response
    }
    out.end();
    await finished(out);
  } catch (error) {
    out.destroy();
    await rm(part, { force: true });
    const reason =
      error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
    throw new CliError(
      `the export was interrupted after ${written} events (${reason})`,
      ExitCode.unavailable,
    );
  }
  progress(true);
  await rename(part, file);
  ctx.print(`Wrote ${written} events to ${file}`);
}
