import { CliError, ExitCode } from '#cli/exitCodes';
import type { ApiClient, Query } from './apiClient';
import type { Json } from './resources';

/** A list filter that names a catalogue record, and how to find that record. */
interface NamedFilter {
  readonly param: string;
  readonly noun: string;
  /** Lists whose ids a numeric value is looked up in (a list of at most 1000: categories, species, atlases). */
  readonly listPath: string;
  /** The record by name; a 404 means there is none. */
  readonly byName: (value: string) => string;
  readonly listCommand: string;
}

const NAMED_FILTERS: readonly NamedFilter[] = [
  {
    param: 'species',
    noun: 'species',
    listPath: '/api/species/',
    byName: (v) => `/api/species/${encodeURIComponent(v)}/`,
    listCommand: 'bic species list',
  },
  {
    param: 'atlas',
    noun: 'atlas',
    listPath: '/api/atlases/',
    byName: (v) => `/api/atlases/${encodeURIComponent(v.toLowerCase())}/`,
    listCommand: 'bic atlases list',
  },
  {
    param: 'category',
    noun: 'category',
    listPath: '/api/categories/',
    byName: (v) => `/api/categories/${encodeURIComponent(v)}/`,
    listCommand: 'bic categories list',
  },
];

/**
 * Fails (exit 5, naming the value) when a species, atlas or category filter of `query` names no
 * record: the list endpoints answer such a filter with an empty list, as they answer a real one
 * with nothing in it. Called only when a list came back empty, so a normal list costs nothing more.
 */
export async function checkFilterValues(api: ApiClient, server: string, query: Query): Promise<void> {
  for (const filter of NAMED_FILTERS) {
    const value = query[filter.param];
    if (typeof value !== 'string' || value.trim() === '') continue;
    if (await exists(api, filter, value.trim())) continue;
    throw new CliError(
      `no ${filter.noun} "${value}" on ${server} (see \`${filter.listCommand}\`)`,
      ExitCode.notFound,
    );
  }
}

async function exists(api: ApiClient, filter: NamedFilter, value: string): Promise<boolean> {
  if (/^\d+$/.test(value)) {
    // By id: the list's first 1000 (catalogues are far smaller); beyond that, not claimed absent.
    const response = await api.send({ method: 'GET', path: filter.listPath });
    const rows = (await response.json()) as Json[];
    if (rows.some((row) => String(row.id) === value)) return true;
    return Number(response.headers.get('x-total-count') ?? rows.length) > rows.length;
  }
  const response = await api.send({ method: 'GET', path: filter.byName(value), accept: [404] });
  await response.body?.cancel();
  return response.status !== 404;
}
