import { Type } from '@sinclair/typebox';
import type { GlobalPosition } from '#shared/eventStore/eventStore';
import type { Reply, RequestContext } from '#shared/http/routeSpec';
import { ValidationError } from '#shared/errors/httpErrors';
import {
  DEFAULT_PAGE_SIZE,
  listReply,
  listResponseSchema,
  MAX_PAGE_SIZE,
  UNPAGED_MAX,
  type Window,
} from '#shared/query/listResponse';
import type { SearchFacet, SearchQuery, SearchResult } from '#shared/search/searchIndex';
import { brainJson, type BrainShape } from '#shared/views/brainViews';
import { type QueryDeps, brainViewFor } from '#services/query-api/queryDeps';
import { brainsByIds } from './brainSql';
import { searchFilters, searchSort } from './searchBrainFilters';
import { brainFacets, facetsSchema } from './searchFacets';

const FACETS: readonly SearchFacet[] = ['species', 'atlas', 'category', 'verified'];

export const searchQueryProperties = {
  search: Type.Optional(
    Type.String({
      description:
        'Matches any substring of the name (case-insensitive), an exact id or readable_id, words of the description, the species (common or scientific name), atlas and category names, and a name with a typo. Best matches first unless `ordering` is given.',
    }),
  ),
  facets: Type.Optional(
    Type.String({
      description: `Comma-separated subset of ${FACETS.join(', ')}: adds "facets" to the envelope, the matching brains counted per value under the same search and filters. Envelope mode only (page or page_size): 400 without it.`,
    }),
  ),
};

/** The list's 200 schema, the envelope with its optional `facets`. */
export function brainListSchema(item: Readonly<Record<string, unknown>>) {
  const list = listResponseSchema(item);
  return {
    oneOf: list.oneOf.map((variant) =>
      variant.type === 'object'
        ? { ...variant, properties: { ...variant.properties, facets: facetsSchema } }
        : variant,
    ),
  };
}

/** The `facets` parameter: undefined when absent, 400 on an unknown name or in array mode. */
function requestedFacets(query: Record<string, unknown>, paged: boolean): SearchFacet[] | undefined {
  if (typeof query.facets !== 'string') return undefined;
  const names = query.facets
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  // `facets=` with nothing in it asks for nothing.
  if (names.length === 0) return undefined;
  const unknown = names.filter((name) => !(FACETS as readonly string[]).includes(name));
  if (unknown.length > 0)
    throw ValidationError.field(
      'facets',
      `Unknown facet(s): ${unknown.join(', ')}. Use ${FACETS.join(', ')}.`,
    );
  if (!paged)
    throw ValidationError.field('facets', 'Facets need the envelope mode: give page or page_size as well.');
  return [...new Set(names)] as SearchFacet[];
}

/** The window listReply will ask for (so one index query answers both the count and the page). */
function windowOf(query: Record<string, unknown>, paged: boolean): Window {
  if (!paged) return { limit: UNPAGED_MAX, offset: 0 };
  const size = Math.min((query.page_size as number | undefined) ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  return { limit: size, offset: (((query.page as number | undefined) ?? 1) - 1) * size };
}

/**
 * The brains list through the SearchIndex, when `search` (not blank) or `facets` is given;
 * undefined otherwise (the plain SQL path answers). Filters combine with AND as on the SQL path.
 */
export async function searchBrains(
  deps: QueryDeps,
  ctx: RequestContext,
  shape: BrainShape,
  paged: boolean,
  now: GlobalPosition,
  signal: AbortSignal,
): Promise<Reply | undefined> {
  const facets = requestedFacets(ctx.query, paged);
  const text = typeof ctx.query.search === 'string' ? ctx.query.search.trim() : '';
  if (text === '' && !facets) return undefined;
  const window = windowOf(ctx.query, paged);
  const base: Omit<SearchQuery, 'limit' | 'offset'> = {
    text,
    filters: await searchFilters(deps, ctx, now),
    sort: searchSort(ctx.query.ordering),
  };
  const first = await keptRankingPage(deps, { ...base, ...window, facets }, now, signal);
  // The facets' names are read beside the page's brains, not after them.
  const named = first.facets ? brainFacets(deps.readModels, first.facets) : undefined;
  named?.catch(() => undefined); // awaited below; a failure of the page must not leave it unhandled
  const reply = await listReply(ctx, {
    count: () => Promise.resolve(first.total),
    fetch: async ({ limit, offset }) => {
      const ids =
        limit === window.limit && offset === window.offset
          ? first.ids
          : (await deps.search.query({ ...base, limit, offset }, { signal })).ids;
      return (await brainsByIds(deps.readModels, ids)).map((row) =>
        brainJson(shape, row, brainViewFor(deps, ctx)),
      );
    },
  });
  if (!named || typeof reply.body !== 'object' || Array.isArray(reply.body)) return reply;
  return { ...reply, body: { ...reply.body, facets: await named } };
}

/**
 * Ids of a search's ranking kept for its pages (QueryDeps.searchRankings): the first pages' depth,
 * and the depth kept once a page beyond it is asked for.
 */
export const KEPT_RANKING = { first: 1_000, deep: 10_000 } as const;

/**
 * The window's page. A text search ranks every match on each query, whatever the page; so its
 * ranking (its first ids, the total and the facets) is kept while the answer cache is on, and the
 * pages of one search, as a person or a client walks them, are slices of one query. Most searches
 * are looked at on their first pages only (a search typed as you type is asked for at every key),
 * and ranking 10,000 ids costs a common word's statement about twice what 1,000 do: a ranking is kept to
 * KEPT_RANKING.first ids, and to KEPT_RANKING.deep from the first page asked for beyond that.
 * The key holds the filters, the viewer among them: one caller's ranking is never another's (staff
 * share theirs, anonymous callers theirs). It expires at the next embargo's end (QueryDeps).
 */
export async function keptRankingPage(
  deps: Pick<QueryDeps, 'search' | 'searchRankings'>,
  query: SearchQuery,
  now: GlobalPosition,
  signal?: AbortSignal,
): Promise<SearchResult> {
  const rankings = deps.searchRankings;
  if (!rankings || !query.text) return deps.search.query(query, { signal });
  const { limit, offset, ...search } = query;
  const depth = offset + limit <= KEPT_RANKING.first ? KEPT_RANKING.first : KEPT_RANKING.deep;
  const ranking = await rankings.get(
    `${depth} ${JSON.stringify(search)}`,
    now,
    (askers) => deps.search.query({ ...search, limit: depth, offset: 0 }, { signal: askers }),
    signal,
  );
  if (offset + limit > ranking.ids.length && ranking.ids.length < ranking.total)
    return deps.search.query(query, { signal }); // beyond what is kept
  return { ...ranking, ids: ranking.ids.slice(offset, offset + limit) };
}
