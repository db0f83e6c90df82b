import { namedStatement } from '../../infra/postgres/namedStatement';
import { FACET_VALUE_LIMIT } from '../facetOrder';
import type { SearchFacet, SearchFilters, SearchQuery, SearchSortField } from '../searchIndex';
import { escapeLike, type SearchText } from '../searchText';

export interface SqlStatement {
  /** Set where the generic plan is as good as a custom one: each connection then plans it once. */
  readonly name?: string;
  readonly text: string;
  readonly values: unknown[];
}

/** A named statement, its name derived from its text (one per shape of query). */
const named = (text: string, values: unknown[]): SqlStatement => namedStatement('search', text, values);

class Parameters {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

export const FACET_COLUMNS: Readonly<Record<SearchFacet, string>> = {
  species: 'species_id',
  atlas: 'atlas_id',
  category: 'category_id',
  verified: 'verified',
};

const SORT_COLUMNS: Readonly<Record<SearchSortField, string>> = {
  date_uploaded: 'date_uploaded',
  id: 'brain_id',
  name: 'lower(name)',
  readable_id: 'readable_id',
};

/** The explicit order (columns of `alias`), or undefined for the query's default one. */
function explicitOrder(query: SearchQuery, alias: string): string | undefined {
  if (!query.sort || query.sort.length === 0) return undefined;
  const prefix = alias === '' ? '' : `${alias}.`;
  const column = (field: SearchSortField): string =>
    field === 'name' ? `lower(${prefix}name)` : `${prefix}${SORT_COLUMNS[field]}`;
  const parts = query.sort.map((s) => `${column(s.field)} ${s.descending ? 'DESC' : 'ASC'}`);
  return [...parts, `${prefix}brain_id DESC`].join(', ');
}

/** One value compares with `=`: the planner then walks the (column, date_uploaded) index in order. */
function anyOf(column: string, values: readonly number[], type: string, p: Parameters): string {
  return values.length === 1
    ? `${column} = ${p.add(values[0])}::${type}`
    : `${column} = ANY(${p.add(values)}::${type}[])`;
}

/** The filters on the placement columns, which the kept counts can answer (of table `alias`). */
function placementConditions(filters: SearchFilters, alias: string, p: Parameters): string[] {
  const conditions: string[] = [];
  if (filters.speciesIds) conditions.push(anyOf(`${alias}.species_id`, filters.speciesIds, 'integer', p));
  if (filters.atlasIds) conditions.push(anyOf(`${alias}.atlas_id`, filters.atlasIds, 'integer', p));
  if (filters.categoryIds) conditions.push(anyOf(`${alias}.category_id`, filters.categoryIds, 'integer', p));
  if (filters.verified !== undefined)
    conditions.push(`${alias}.verified = ${p.add(filters.verified)}::boolean`);
  return conditions;
}

function filterConditions(filters: SearchFilters, p: Parameters): string[] {
  const conditions = ['NOT d.removed', ...placementConditions(filters, 'd', p)];
  if (filters.uploaderId !== undefined)
    conditions.push(`d.uploader_id = ${p.add(filters.uploaderId)}::integer`);
  return conditions;
}

function facetSelect(facet: SearchFacet, from: string, where: string): string {
  const column = FACET_COLUMNS[facet];
  return `(SELECT coalesce(json_agg(json_build_array(value, n)), '[]'::json) FROM (
      SELECT d.${column} AS value, count(*) AS n FROM ${from} d WHERE ${where} AND d.${column} IS NOT NULL
       GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT ${FACET_VALUE_LIMIT}) s) AS "${facet}"`;
}

/** A facet summed over the kept counts of the placements the filters select. */
function countedFacetSelect(facet: SearchFacet, counts: string, where: string): string {
  const column = FACET_COLUMNS[facet];
  return `(SELECT coalesce(json_agg(json_build_array(value, n)), '[]'::json) FROM (
      SELECT c.${column} AS value, sum(c.n) AS n FROM ${counts} c WHERE ${where} AND c.${column} IS NOT NULL
       GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT ${FACET_VALUE_LIMIT}) s) AS "${facet}"`;
}

/**
 * Without text: newest first along the (filter, date_uploaded, id) indexes. The total and facets
 * come from the kept counts unless the uploader filter (not a placement column) is given.
 */
export function listSql(query: SearchQuery, documents: string, counts: string): SqlStatement {
  const p = new Parameters();
  const filters = query.filters ?? {};
  const where = filterConditions(filters, p).join(' AND ');
  // Its parameters exist only where it is used: PostgreSQL refuses a parameter it cannot type.
  const countedWhere =
    filters.uploaderId === undefined
      ? ['true', ...placementConditions(filters, 'c', p)].join(' AND ')
      : undefined;
  const selects = [
    `ARRAY(SELECT d.brain_id FROM ${documents} d WHERE ${where}
       ORDER BY ${explicitOrder(query, 'd') ?? 'd.date_uploaded DESC, d.brain_id DESC'} LIMIT ${p.add(query.limit)} OFFSET ${p.add(query.offset)}) AS ids`,
    countedWhere !== undefined
      ? `(SELECT coalesce(sum(c.n), 0) FROM ${counts} c WHERE ${countedWhere})::bigint AS total`
      : `(SELECT count(*) FROM ${documents} d WHERE ${where}) AS total`,
    ...(query.facets ?? []).map((facet) =>
      countedWhere !== undefined
        ? countedFacetSelect(facet, counts, countedWhere)
        : facetSelect(facet, documents, where),
    ),
  ];
  return named(`SELECT ${selects.join(',\n')}`, p.values);
}

/**
 * With text: every way of matching is an OR of index-backed conditions (full text GIN, trigram
 * GIN for typos and substrings, the readable_id btree, the primary key), matched once into a CTE
 * that the page, the total and the facets all read. Tiers rank exact id / readable_id / name
 * first, then name or readable_id prefixes, then full-text rank, then typo similarity.
 */
export function searchSql(query: SearchQuery, search: SearchText, documents: string): SqlStatement {
  const p = new Parameters();
  const where = filterConditions(query.filters ?? {}, p);
  const text = p.add(search.text);
  const prefix = p.add(`${escapeLike(search.text)}%`);
  // Any substring of the name matches (decisions.md); below three characters the trigram index
  // cannot help and this condition is checked row by row.
  const substring = `d.name ILIKE ${p.add(`%${escapeLike(search.text)}%`)}`;
  const idMatch =
    search.numericId === undefined ? 'false' : `d.brain_id = ${p.add(search.numericId)}::integer`;
  const exact = `(${idMatch} OR d.readable_id = lower(${text}) OR lower(d.name) = lower(${text}))`;
  const fullText = `(d.search_vector @@ q.tsq OR ${substring})`;
  // `name %> text` is `text <% name` (word similarity) as the trigram index's condition reads it:
  // written so, the planner sees it is the index condition and does not evaluate it again per row.
  const matches = `(${fullText} OR d.name %> ${text} OR d.readable_id = lower(${text}) OR ${idMatch})`;
  const order =
    explicitOrder(query, '') ?? 'tier, text_rank DESC, similarity DESC, date_uploaded DESC, brain_id DESC';
  const selects = [
    `ARRAY(SELECT brain_id FROM matched ORDER BY ${order} LIMIT ${p.add(query.limit)} OFFSET ${p.add(query.offset)}) AS ids`,
    '(SELECT count(*) FROM matched) AS total',
    ...(query.facets ?? []).map((facet) => facetSelect(facet, 'matched', 'true')),
  ];
  return {
    text: `
      WITH q AS (
        SELECT to_tsquery('simple', nullif(array_to_string(ARRAY(
          SELECT '''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || ''':*'
            FROM unnest(tsvector_to_array(to_tsvector('simple', ${text}))) AS lexeme), ' & '), '')) AS tsq
      ),
      matched AS MATERIALIZED (
        SELECT d.brain_id, d.date_uploaded, d.name, d.readable_id, d.species_id, d.atlas_id, d.category_id, d.verified,
               CASE WHEN ${exact} THEN 0
                    WHEN d.name ILIKE ${prefix} OR d.readable_id ILIKE ${prefix} THEN 1
                    WHEN ${fullText} THEN 2
                    ELSE 3 END AS tier,
               coalesce(ts_rank(d.search_vector, q.tsq), 0) AS text_rank,
               word_similarity(${text}, d.name) AS similarity
          FROM ${documents} d CROSS JOIN q
         WHERE ${[...where, matches].join(' AND ')}
      )
      SELECT ${selects.join(',\n')}`,
    values: p.values,
  };
}
