import { type Command, InvalidArgumentError } from 'commander';
import type { Query } from '#cli/api/apiClient';
import type { Json, Page } from '#cli/api/resources';
import type { CliContext } from '#cli/context';
import { printJson } from '#cli/output/printJson';
import { type Column, renderTable } from '#cli/output/table';

/** One filter of a list endpoint, as an option: `--scientific-name <value>` → `scientific_name=`. */
export interface Filter {
  readonly flag: string;
  readonly param: string;
  readonly description: string;
  readonly parse?: (raw: string) => string;
}

export interface Listing {
  readonly path: string;
  readonly filters: readonly Filter[];
  /** The table's columns; a function picks them by the rows (a column shown only when it says something). */
  readonly columns: readonly Column<Json>[] | ((rows: readonly Json[]) => readonly Column<Json>[]);
  /** Always sent (brains: `shape=a`, the readable catalogue form). */
  readonly fixedQuery?: Query;
}

export const positiveInt = (raw: string): string => {
  if (!/^[1-9]\d{0,8}$/.test(raw)) throw new InvalidArgumentError('a positive integer');
  return raw;
};

export const boolean = (raw: string): string => {
  if (!['true', 'false'].includes(raw)) throw new InvalidArgumentError('true or false');
  return raw;
};

/** `list` with the endpoint's filters, --search, --ordering, --page/--page-size, --json. */
export function addListCommand(parent: Command, listing: Listing, run: ReturnType<typeof listRunner>): void {
  const list = parent.command('list').description(`list ${parent.name()} (a table; --json for scripts)`);
  for (const f of listing.filters)
    if (f.parse) list.option(`--${f.flag} <value>`, f.description, f.parse);
    else list.option(`--${f.flag} <value>`, f.description);
  list
    .option('--search <text>', 'search text (brains: name, id or readable id)')
    .option('--ordering <fields>', 'comma-separated fields, - for descending')
    .option('--page <n>', 'page number (paged mode)', positiveInt)
    .option('--page-size <n>', 'items per page (paged mode; the server caps it at 100)', positiveInt)
    .option('--json', 'print the JSON the server sent')
    .action(run(listing));
}

type ListOptions = Record<string, string | boolean | undefined>;

export const listRunner =
  (run: <O>(body: (ctx: CliContext, opts: O) => Promise<void>) => (...p: unknown[]) => Promise<void>) =>
  (listing: Listing) =>
    run((ctx, opts: ListOptions) => list(ctx, listing, opts));

async function list(ctx: CliContext, listing: Listing, opts: ListOptions): Promise<void> {
  const query: Query = { ...listing.fixedQuery };
  for (const f of listing.filters) query[f.param] = text(opts[camel(f.flag)]);
  query.search = text(opts.search);
  query.ordering = text(opts.ordering);
  query.page = text(opts.page);
  query.page_size = text(opts.pageSize);
  const paged = query.page !== undefined || query.page_size !== undefined;
  const response = await ctx.api.send({ method: 'GET', path: listing.path, query });
  const body = (await response.json()) as Json[] | Page<Json>;
  if (opts.json) return printJson(ctx, body);
  const rows = Array.isArray(body) ? body : body.results;
  const columns = typeof listing.columns === 'function' ? listing.columns(rows) : listing.columns;
  ctx.print(renderTable(rows, columns));
  if (!Array.isArray(body)) {
    const size = Math.min(Number(query.page_size ?? 20), 100); // the server clamps larger sizes
    ctx.print(
      `page ${query.page ?? 1} of ${Math.max(1, Math.ceil(body.count / size))}, ${body.count} in all`,
    );
  } else if (!paged && Number(response.headers.get('x-total-count') ?? 0) > rows.length) {
    ctx.notice(`showing ${rows.length} of ${response.headers.get('x-total-count')}; use --page for the rest`);
  }
}

const text = (value: string | boolean | undefined): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

const camel = (flag: string): string => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
