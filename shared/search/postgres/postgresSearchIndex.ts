import type { Pool } from 'pg';
import { inTransaction } from '#shared/infra/postgres/inTransaction';
import { orderFacetCounts } from '#shared/search/facetOrder';
import { latestWrites } from '#shared/search/latestWrites';
import type {
  SearchFacet,
  SearchFacets,
  SearchIndex,
  SearchQuery,
  SearchReader,
  SearchRebuild,
  SearchRemoval,
  SearchResult,
  SearchUpsert,
  SearchWriter,
} from '#shared/search/searchIndex';
import { assertValidPage } from '#shared/search/searchPage';
import { parseSearchText } from '#shared/search/searchText';
import {
  abandonGeneration,
  beginGeneration,
  installSearchTables,
  lockGeneration,
  swapGeneration,
} from './searchGenerations';
import { listSql, searchSql, type SearchSources } from './searchQuerySql';
import { searchTableNames, type SearchTableNames } from './searchTables';
import { writeDocuments, type DocumentWrite } from './searchWrites';
import { createLayoutQuery, type LayoutQuery } from './layoutQuery';

export interface PostgresSearchIndexOptions {
  /** The pool is the caller's (the read-model pool); this adapter never ends it. */
  readonly pool: Pool;
  /** Base name of the tables and views; several indexes may share a database. */
  readonly name?: string;
}

type ResultRow = { ids: number[]; total: string | number } & Partial<
  Record<SearchFacet, [value: number | boolean, count: number][]>
>;

/**
 * SearchIndex on PostgreSQL full text + pg_trgm, standalone rather than a Projection: a rebuild
 * builds a new generation of tables beside the live one and swaps views, as projections do, but the
 * caller decides what documents to write (they join brains with species, atlases and categories).
 */
export function createPostgresSearchIndex({
  pool,
  name = 'brain_search',
}: PostgresSearchIndexOptions): SearchIndex {
  const names = searchTableNames(name);
  const layoutQuery = createLayoutQuery(pool);
  return {
    install: () => installSearchTables(pool, names),
    ...writerFor(pool, names, 'live'),
    query: (query, options) => runQuery(names, layoutQuery, query, options?.signal),
    async beginRebuild(): Promise<SearchRebuild> {
      const generation = await beginGeneration(pool, names);
      return {
        ...writerFor(pool, names, generation),
        finish: () => swapGeneration(pool, names, generation),
        abandon: () => abandonGeneration(pool, names, generation),
      };
    },
  };
}

/**
 * Queries alone, over the views `<name>`, `<name>_counts`, `<name>_words` and `<name>_lexemes`
 * whoever keeps them:
 * the search projection (services/projector/projections/searchProjection.ts) in the service.
 */
export function createPostgresSearchReader({
  pool,
  name = 'brain_search',
}: PostgresSearchIndexOptions): SearchReader {
  const names = searchTableNames(name);
  const layoutQuery = createLayoutQuery(pool);
  return { query: (query, options) => runQuery(names, layoutQuery, query, options?.signal) };
}

function writerFor(pool: Pool, names: SearchTableNames, generation: number | 'live'): SearchWriter {
  const write = (writes: readonly DocumentWrite[]): Promise<void> =>
    writes.length === 0
      ? Promise.resolve()
      : inTransaction(pool, async (client) => {
          const target = await lockGeneration(client, names, generation);
          await writeDocuments(client, names.documents(target), writes);
        });
  return {
    upsert: (entries: readonly SearchUpsert[]) =>
      write(
        latestWrites(entries, (e) => e.document.brainId).map((e) => ({
          brainId: e.document.brainId,
          document: e.document,
          position: e.position,
        })),
      ),
    remove: (entries: readonly SearchRemoval[]) =>
      write(latestWrites(entries, (e) => e.brainId).map((e) => ({ ...e, document: null }))),
  };
}

async function runQuery(
  names: SearchTableNames,
  layoutQuery: LayoutQuery,
  query: SearchQuery,
  signal: AbortSignal | undefined,
): Promise<SearchResult> {
  assertValidPage(query);
  const search = parseSearchText(query.text);
  const sources: SearchSources = {
    documents: names.documentsView,
    words: names.wordsView,
    lexemes: names.lexemesView,
  };
  const rows = await layoutQuery<ResultRow>(
    (layout) =>
      search
        ? searchSql(query, search, sources, layout)
        : listSql(query, names.documentsView, names.countsView, layout),
    signal,
  );
  const row = rows[0];
  if (!row) throw new Error('search query returned no row');
  const result = { total: Number(row.total), ids: row.ids };
  if (!query.facets) return result;
  const facets: Partial<Record<SearchFacet, ReturnType<typeof orderFacetCounts>>> = {};
  for (const facet of query.facets) {
    const counts = (row[facet] ?? []).map(([value, count]) => ({
      value: facet === 'verified' ? value === true || value === 1 : Number(value),
      count: Number(count),
    }));
    facets[facet] = orderFacetCounts(counts);
  }
  return { ...result, facets: facets satisfies SearchFacets };
}
