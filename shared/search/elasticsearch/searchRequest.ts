import type { estypes } from '@elastic/elasticsearch';
import { FACET_VALUE_LIMIT } from '#shared/search/facetOrder';
import type { SearchFacet, SearchFilters, SearchQuery, SearchSortField } from '#shared/search/searchIndex';
import { searchWords, type SearchText } from '#shared/search/searchText';

export const FACET_FIELDS: Readonly<Record<SearchFacet, string>> = {
  species: 'speciesId',
  atlas: 'atlasId',
  category: 'categoryId',
  verified: 'verified',
};

/** Keyword fields sort like the PostgreSQL adapter: names and readable_ids lowercased. */
const SORT_FIELDS: Readonly<Record<SearchSortField, string>> = {
  date_uploaded: 'dateUploaded',
  id: 'brainId',
  name: 'name.exact',
  readable_id: 'readableId',
};

const FULL_TEXT_FIELDS = [
  'name^3',
  'readableId.text^3',
  'speciesName^2',
  'scientificName^2',
  'atlasName^2',
  'categoryName^2',
  'description',
];

/** Tier boosts, far apart so that relevance within a tier never lifts a document into the next. */
const EXACT = 1000;
const PREFIX = 100;
const FULL_TEXT = 10;
const FUZZY = 1;

function filterClauses(filters: SearchFilters): estypes.QueryDslQueryContainer[] {
  const clauses: estypes.QueryDslQueryContainer[] = [];
  if (filters.speciesIds) clauses.push({ terms: { speciesId: [...filters.speciesIds] } });
  if (filters.atlasIds) clauses.push({ terms: { atlasId: [...filters.atlasIds] } });
  if (filters.categoryIds) clauses.push({ terms: { categoryId: [...filters.categoryIds] } });
  if (filters.verified !== undefined) clauses.push({ term: { verified: filters.verified } });
  if (filters.uploaderId !== undefined) clauses.push({ term: { uploaderId: filters.uploaderId } });
  return [...clauses, ...visibilityClauses(filters)];
}

/** One of the clauses, as a filter. */
const anyOf = (should: estypes.QueryDslQueryContainer[]): estypes.QueryDslQueryContainer => ({
  bool: { should, minimum_should_match: 1 },
});

/** Public as stored; a document written before visibility existed has none and was public. */
const STORED_PUBLIC: estypes.QueryDslQueryContainer[] = [
  { term: { visibility: 'public' } },
  { bool: { must_not: [{ exists: { field: 'visibility' } }] } },
];

/** An embargo whose time has passed, by the cluster's clock at query time (no write at its end). */
const EMBARGO_ENDED: estypes.QueryDslQueryContainer = {
  bool: { filter: [{ term: { visibility: 'embargoed' } }, { range: { embargoUntil: { lte: 'now' } } }] },
};

/**
 * The visibility rule (shared/domain/brains/visibility canSeeBrain) for `filters.viewer`: public in
 * effect (stored public, or an ended embargo), or the viewer among the readers (uploader and
 * collaborators); nothing for staff or without viewer. Then the effective `visibility` filter. As
 * filters, they hold for the hits, the total and every aggregation alike.
 */
export function visibilityClauses(filters: SearchFilters): estypes.QueryDslQueryContainer[] {
  const clauses: estypes.QueryDslQueryContainer[] = [];
  const viewer = filters.viewer;
  if (viewer && !viewer.isStaff)
    clauses.push(
      anyOf([
        ...STORED_PUBLIC,
        EMBARGO_ENDED,
        ...(viewer.userId === null ? [] : [{ term: { readers: viewer.userId } }]),
      ]),
    );
  switch (filters.visibility) {
    case 'public':
      clauses.push(anyOf([...STORED_PUBLIC, EMBARGO_ENDED]));
      break;
    case 'private':
      clauses.push({ term: { visibility: 'private' } });
      break;
    case 'embargoed':
      clauses.push({
        bool: {
          filter: [{ term: { visibility: 'embargoed' } }],
          must_not: [{ range: { embargoUntil: { lte: 'now' } } }],
        },
      });
      break;
    case undefined:
      break;
  }
  return clauses;
}

const scored = (boost: number, filter: estypes.QueryDslQueryContainer): estypes.QueryDslQueryContainer => ({
  constant_score: { filter, boost },
});

/** Every word, as a word or a word prefix, in some field (term-centric AND, like the tsquery). */
function fullText(words: readonly string[]): estypes.QueryDslQueryContainer {
  return {
    bool: {
      must: words.map((word) => ({
        multi_match: { query: word, type: 'bool_prefix', fields: FULL_TEXT_FIELDS },
      })),
    },
  };
}

function relevance(search: SearchText): estypes.QueryDslQueryContainer[] {
  const words = searchWords(search.text);
  const clauses: estypes.QueryDslQueryContainer[] = [
    scored(EXACT, { term: { readableId: search.text } }),
    scored(EXACT, { term: { 'name.exact': search.text } }),
    scored(PREFIX, { prefix: { 'name.exact': { value: search.text, case_insensitive: true } } }),
    scored(PREFIX, { prefix: { readableId: { value: search.text, case_insensitive: true } } }),
    scored(FUZZY, { match: { name: { query: search.text, fuzziness: 'AUTO', operator: 'and' } } }),
  ];
  if (search.numericId !== undefined) clauses.push(scored(EXACT, { term: { brainId: search.numericId } }));
  if (words.length > 0) clauses.push(scored(FULL_TEXT, fullText(words)), fullText(words));
  // Any substring of the name matches (decisions.md), however short.
  clauses.push(
    scored(FULL_TEXT, {
      wildcard: {
        'name.exact': { value: `*${search.text.replace(/[*?\\]/g, '\\$&')}*`, case_insensitive: true },
      },
    }),
  );
  return clauses;
}

export function searchRequest(
  index: string,
  query: SearchQuery,
  search: SearchText | undefined,
): estypes.SearchRequest {
  const filters = [...filterClauses(query.filters ?? {})];
  const bool: estypes.QueryDslBoolQuery = { filter: filters, must_not: [{ term: { removed: true } }] };
  if (search) {
    bool.should = relevance(search);
    bool.minimum_should_match = 1;
  }
  const recency: estypes.SortCombinations[] = [{ dateUploaded: 'desc' }, { brainId: 'desc' }];
  return {
    index,
    query: { bool },
    sort: explicitSort(query) ?? (search ? [{ _score: { order: 'desc' } }, ...recency] : recency),
    from: query.offset,
    size: query.limit,
    track_total_hits: true,
    _source: false,
    aggs: Object.fromEntries(
      (query.facets ?? []).map((facet) => [
        facet,
        { terms: { field: FACET_FIELDS[facet], size: FACET_VALUE_LIMIT } },
      ]),
    ),
  };
}

function explicitSort(query: SearchQuery): estypes.SortCombinations[] | undefined {
  if (!query.sort || query.sort.length === 0) return undefined;
  return [
    ...query.sort.map((s): estypes.SortCombinations => ({
      [SORT_FIELDS[s.field]]: s.descending ? 'desc' : 'asc',
    })),
    { brainId: 'desc' },
  ];
}
