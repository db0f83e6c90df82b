import { randomBytes } from 'node:crypto';
import type { Client, estypes } from '@elastic/elasticsearch';
import { orderFacetCounts } from '#shared/search/facetOrder';
import { latestWrites } from '#shared/search/latestWrites';
import type {
  FacetCount,
  SearchFacet,
  SearchFacets,
  SearchIndex,
  SearchQuery,
  SearchRebuild,
  SearchResult,
  SearchWriter,
} from '#shared/search/searchIndex';
import { assertValidPage } from '#shared/search/searchPage';
import { parseSearchText } from '#shared/search/searchText';
import { bulkWrite, type SearchWrite } from './bulkWrites';
import { SEARCH_MAPPINGS, searchSettings, VISIBILITY_PROPERTIES } from './searchMapping';
import { searchRequest } from './searchRequest';

export interface ElasticsearchSearchIndexOptions {
  /** The client is the caller's; this adapter never closes it. */
  readonly client: Client;
  /** Queries and live writes go through this alias; physical indexes are `<alias>-<suffix>`. */
  readonly alias: string;
  /** Replicas of the live index (a rebuild loads with none and adds them before the swap). */
  readonly replicas?: number;
  /** Refresh after live writes: false in production (near real time), 'wait_for' where a test reads its writes. */
  readonly refresh?: estypes.Refresh;
}

type TermsAggregate = estypes.AggregationsMultiBucketAggregateBase<{
  key: number | string;
  doc_count: number;
}>;

/**
 * SearchIndex on Elasticsearch. A rebuild loads a new physical index with refresh disabled and no
 * replicas, then restores both, refreshes, and swaps the alias over in one atomic request that also
 * deletes the old index.
 */
export function createElasticsearchSearchIndex(options: ElasticsearchSearchIndexOptions): SearchIndex {
  const { client, alias, replicas = 1, refresh = false } = options;
  const newIndexName = (): string => `${alias}-${Date.now()}-${randomBytes(3).toString('hex')}`;
  const writer = (index: string, refreshAfter: estypes.Refresh): SearchWriter => {
    const write = (writes: readonly SearchWrite[]): Promise<void> =>
      bulkWrite(client, index, writes, refreshAfter);
    return {
      upsert: (entries) =>
        write(
          latestWrites(entries, (e) => e.document.brainId).map((e) => ({
            ...e,
            brainId: e.document.brainId,
          })),
        ),
      remove: (entries) =>
        write(latestWrites(entries, (e) => e.brainId).map((e) => ({ ...e, document: null }))),
    };
  };

  return {
    async install() {
      if (await client.indices.existsAlias({ name: alias })) {
        // An index created before the visibility fields: they are added (a no-op once there).
        await client.indices.putMapping({ index: alias, properties: VISIBILITY_PROPERTIES });
        return;
      }
      const index = newIndexName();
      try {
        await client.indices.create({
          index,
          mappings: SEARCH_MAPPINGS,
          settings: searchSettings({ replicas, building: false }),
          aliases: { [alias]: { is_write_index: true } },
        });
      } catch (error) {
        // Another process installed it at the same moment: keep theirs.
        await client.indices.delete({ index }, { ignore: [404] });
        if (!(await client.indices.existsAlias({ name: alias }))) throw error;
      }
    },
    ...writer(alias, refresh),
    query: (query, options) => runQuery(client, alias, query, options?.signal),
    async beginRebuild(): Promise<SearchRebuild> {
      await deleteUnaliased(client, alias);
      const index = newIndexName();
      await client.indices.create({
        index,
        mappings: SEARCH_MAPPINGS,
        settings: searchSettings({ replicas, building: true }),
      });
      return {
        ...writer(index, false),
        finish: () => swapAlias(client, alias, index, replicas),
        abandon: async () => {
          await client.indices.delete({ index }, { ignore: [404] });
        },
      };
    },
  };
}

/** Physical indexes of this alias that it does not point at: unfinished rebuilds. */
async function deleteUnaliased(client: Client, alias: string): Promise<void> {
  const indexes = await client.indices.get({ index: `${alias}-*`, allow_no_indices: true });
  const stale = Object.entries(indexes)
    .filter(([, state]) => !Object.hasOwn(state.aliases ?? {}, alias))
    .map(([name]) => name);
  if (stale.length > 0) await client.indices.delete({ index: stale }, { ignore: [404] });
}

async function swapAlias(client: Client, alias: string, index: string, replicas: number): Promise<void> {
  // Fails with 404 when a newer rebuild has deleted this one: a superseded rebuild never goes live.
  await client.indices.putSettings({
    index,
    settings: { index: { refresh_interval: '1s', number_of_replicas: replicas } },
  });
  await client.indices.refresh({ index });
  const current = await client.indices.getAlias({ name: alias }, { ignore: [404] });
  const old = Object.keys(current).filter((name) => name !== index && name.startsWith(`${alias}-`));
  await client.indices.updateAliases({
    actions: [
      { add: { index, alias, is_write_index: true } },
      ...old.map((name) => ({ remove_index: { index: name } })),
    ],
  });
}

async function runQuery(
  client: Client,
  alias: string,
  query: SearchQuery,
  signal: AbortSignal | undefined,
): Promise<SearchResult> {
  assertValidPage(query);
  const response = await client.search<unknown, Partial<Record<SearchFacet, TermsAggregate>>>(
    searchRequest(alias, query, parseSearchText(query.text)),
    { signal },
  );
  const total = response.hits.total;
  const result: SearchResult = {
    total: typeof total === 'number' ? total : (total?.value ?? 0),
    ids: response.hits.hits.map((hit) => Number(hit._id)),
  };
  if (!query.facets) return result;
  const facets: Partial<Record<SearchFacet, FacetCount[]>> = {};
  for (const facet of query.facets)
    facets[facet] = orderFacetCounts(facetCounts(facet, response.aggregations?.[facet]));
  return { ...result, facets: facets satisfies SearchFacets };
}

function facetCounts(facet: SearchFacet, aggregate: TermsAggregate | undefined): FacetCount[] {
  const buckets = aggregate?.buckets ?? [];
  return (Array.isArray(buckets) ? buckets : Object.values(buckets)).map((bucket) => ({
    // Boolean terms come back as 1 / 0.
    value: facet === 'verified' ? Number(bucket.key) === 1 : Number(bucket.key),
    count: bucket.doc_count,
  }));
}
