import { type Command, InvalidArgumentError } from 'commander';
import type { Query } from '#cli/api/apiClient';
import type { Json, Page } from '#cli/api/resources';
import type { CliContext } from '#cli/context';
import { printJson } from '#cli/output/printJson';
import { type Column, renderTable } from '#cli/output/table';
import { checkFilterValues } from '#cli/api/catalogueLookups';

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
  /** The facets the endpoint counts (brains): adds `--facets <names>`. */
  readonly facets?: readonly string[];
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
  list.option('--search <text>', 'search text (brains: name, id or readable id)');
  if (listing.facets)
    list.option(
      '--facets <names>',
      `count the matching items per value of ${listing.facets.join(', ')} (comma-separated; pages the list)`,
      facetNames(listing.facets),
    );
  list
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
  query.facets = text(opts.facets);
  // Facets come with the envelope only: ask for pages (the default page size) when they are wanted.
  if (query.facets !== undefined && query.page === undefined && query.page_size === undefined)
    query.page_size = 20;
  const paged = query.page !== undefined || query.page_size !== undefined;
  const response = await ctx.api.send({ method: 'GET', path: listing.path, query });
  const body = (await response.json()) as Json[] | Page<Json>;
  const rows = Array.isArray(body) ? body : body.results;
  // An unknown species, atlas or category filters to nothing, like a known one with no items:
  // tell them apart, so a typo is an error rather than an empty catalogue.
  if (rows.length === 0 && query.page === undefined) await checkFilterValues(ctx.api, ctx.server, query);
  if (opts.json) return printJson(ctx, body);
  const columns = typeof listing.columns === 'function' ? listing.columns(rows) : listing.columns;
  ctx.print(renderTable(rows, columns));
  const facets = Array.isArray(body) ? undefined : (body as Page<Json> & { facets?: Json }).facets;
  if (facets) ctx.print(renderFacets(facets));
  if (!Array.isArray(body)) {
    const size = Math.min(Number(query.page_size ?? 20), 100); // the server clamps larger sizes
    ctx.print(
      `page ${query.page ?? 1} of ${Math.max(1, Math.ceil(body.count / size))}, ${body.count} in all`,
    );
  } else if (!paged && Number(response.headers.get('x-total-count') ?? 0) > rows.length) {
    ctx.notice(`showing ${rows.length} of ${response.headers.get('x-total-count')}; use --page for the rest`);
  }
}

/** `--facets species,atlas`: known names only, so a typo is a usage error here, not a 400 later. */
const facetNames =
  (known: readonly string[]) =>
  (raw: string): string => {
    const names = raw
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean);
    const unknown = names.filter((name) => !known.includes(name));
    if (names.length === 0 || unknown.length > 0)
      throw new InvalidArgumentError(`comma-separated names among ${known.join(', ')}`);
    return names.join(',');
  };

/** Each facet as a heading and its values, most frequent first: `  Mus musculus (id 3)  12`. */
export function renderFacets(facets: Json): string {
  const sections = Object.entries(facets).map(([facet, values]) => {
    const counts = Array.isArray(values) ? (values as Json[]) : [];
    const rows = counts.map((c) => ({
      value:
        typeof c.value === 'boolean'
          ? String(c.value)
          : `${typeof c.name === 'string' && c.name ? c.name : '(unnamed)'} (id ${String(c.id)})`,
      count: c.count,
    }));
    const table = rows.length
      ? renderTable(rows, [
          { header: facet, value: (r) => r.value },
          { header: 'count', value: (r) => r.count },
        ])
      : `${facet.toUpperCase()}\n(none)`;
    return table;
  });
  return `\n${sections.join('\n\n')}`;
}

const text = (value: string | boolean | undefined): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

const camel = (flag: string): string => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
