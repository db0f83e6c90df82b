import { namedStatement } from '../../infra/postgres/namedStatement';
import { FACET_VALUE_LIMIT } from '../facetOrder';
import type { SearchFacet, SearchFilters, SearchQuery, SearchSortField } from '../searchIndex';
import { escapeLike, searchWords, type SearchText } from '../searchText';

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

/** The views (or tables) a text search reads. */
export interface SearchSources {
  readonly documents: string;
  readonly words: string;
}

/**
 * Letters and digits only (ASCII: PostgreSQL's [[:alnum:]] counts them so in any locale), three
 * or more: such a text occurs in a name exactly when it occurs in one of the name's words
 * (NAME_WORDS_SQL), so the dictionary's trigram index finds those words and the GIN index of the
 * documents' words their documents. Other texts (a space, punctuation, shorter) are looked for in
 * the name itself.
 */
const WORD_TEXT = /^[a-z0-9]{3,}$/i;

/**
 * With text: every way of matching is an OR of index-backed conditions (full text GIN, the name's
 * words, the readable_id btree, the primary key), matched once into a CTE that the page, the total
 * and the facets all read. Typos and substrings are looked up in the small dictionary of the
 * names' words first (pg_trgm's "Text Search Integration"); their documents then come from the
 * GIN index of the documents' words, instead of a trigram recheck of every candidate's name.
 * A typo matches when every word of the text is like some word of the name (word similarity at
 * pg_trgm's threshold; Elasticsearch's fuzzy match also asks every word to match). Tiers rank
 * exact id / readable_id / name first, then name or readable_id prefixes, then full-text rank,
 * then typo similarity.
 */
export function searchSql(query: SearchQuery, search: SearchText, sources: SearchSources): SqlStatement {
  const p = new Parameters();
  const where = filterConditions(query.filters ?? {}, p);
  const text = p.add(search.text);
  const prefix = p.add(`${escapeLike(search.text)}%`);
  const lookups: string[] = [];
  /** The documents having one of the dictionary's words that meet `condition` (on `w.word`). */
  const withWordWhere = (condition: string): string => {
    const column = `words${lookups.length}`;
    lookups.push(`ARRAY(SELECT w.word FROM ${sources.words} w WHERE ${condition}) AS ${column}`);
    return `d.name_words && q.${column}`;
  };
  // Any substring of the name matches (decisions.md); below three characters no trigram index can
  // help and this condition is checked row by row.
  const substring = WORD_TEXT.test(search.text)
    ? withWordWhere(`w.word LIKE '%' || lower(${text}) || '%'`)
    : `d.name ILIKE ${p.add(`%${escapeLike(search.text)}%`)}`;
  // `word %> $1` is `$1 <% word` (word similarity) as the trigram index's condition reads it.
  const typoWords = searchWords(search.text).map((word) => withWordWhere(`w.word %> ${p.add(word)}`));
  const typo = typoWords.length === 0 ? 'false' : `(${typoWords.join(' AND ')})`;
  const idMatch =
    search.numericId === undefined ? 'false' : `d.brain_id = ${p.add(search.numericId)}::integer`;
  const exact = `(${idMatch} OR d.readable_id = lower(${text}) OR lower(d.name) = lower(${text}))`;
  const fullText = `(d.search_vector @@ q.tsq OR ${substring})`;
  const matches = `(${fullText} OR ${typo} OR d.readable_id = lower(${text}) OR ${idMatch})`;
  const order = explicitOrder(query, 'm') ?? relevanceOrder(text);
  const selects = [
    `ARRAY(SELECT m.brain_id FROM matched m CROSS JOIN q ORDER BY ${order} LIMIT ${p.add(query.limit)} OFFSET ${p.add(query.offset)}) AS ids`,
    '(SELECT count(*) FROM matched) AS total',
    ...(query.facets ?? []).map((facet) => facetSelect(facet, 'matched', 'true')),
  ];
  return {
    text: `
      WITH q AS (
        SELECT ${[tsQuerySql(text), ...lookups].join(',\n               ')}
      ),
      matched AS MATERIALIZED (
        SELECT d.brain_id, d.date_uploaded, d.name, d.readable_id, d.species_id, d.atlas_id, d.category_id, d.verified,
               d.search_vector,
               CASE WHEN ${exact} THEN 0
                    WHEN d.name ILIKE ${prefix} OR d.readable_id ILIKE ${prefix} THEN 1
                    WHEN ${fullText} THEN 2
                    ELSE 3 END AS tier
          FROM ${sources.documents} d CROSS JOIN q
         WHERE ${[...where, matches].join(' AND ')}
      )
      SELECT ${selects.join(',\n')}`,
    values: p.values,
  };
}

/**
 * Tiers (see searchSql), the full-text tier by text rank, the typo tier by similarity, the few
 * exact and prefix matches by both; then newest first. Each rank is computed only for the rows
 * whose tier it orders (ORDER BY evaluates its CASE per row): the full-text tier is most of a
 * common word's matches, and a similarity per row cost as much as the matching.
 */
function relevanceOrder(text: string): string {
  return `m.tier,
    CASE WHEN m.tier < 3 THEN coalesce(ts_rank(m.search_vector, q.tsq), 0) ELSE 0 END DESC,
    CASE WHEN m.tier <> 2 THEN word_similarity(${text}, m.name) ELSE 0 END DESC,
    m.date_uploaded DESC, m.brain_id DESC`;
}

/** Every word of the text as a word prefix, all of them required: `tsq`, NULL for no word. */
function tsQuerySql(text: string): string {
  return `to_tsquery('simple', nullif(array_to_string(ARRAY(
          SELECT '''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || ''':*'
            FROM unnest(tsvector_to_array(to_tsvector('simple', ${text}))) AS lexeme), ' & '), '')) AS tsq`;
}

/**
 * The text search of the v2 layout (no `name_words`, no words dictionary: trigram GIN on the name
 * for typos and substrings), sent while the live generation is v2, as it stays while an upgrade
 * rebuilds v3 beside it (textSearch.ts). Kept until every deployment has swapped to v3; delete
 * with the next layout change. Its `v3_live` column says whether the views point at a v3
 * generation by now (catalogue lookups, no round trip of their own), so that the search after a
 * swap sends searchSql.
 */
export function searchSqlV2(query: SearchQuery, search: SearchText, sources: SearchSources): SqlStatement {
  const p = new Parameters();
  const where = filterConditions(query.filters ?? {}, p);
  const text = p.add(search.text);
  const prefix = p.add(`${escapeLike(search.text)}%`);
  const substring = `d.name ILIKE ${p.add(`%${escapeLike(search.text)}%`)}`;
  const idMatch =
    search.numericId === undefined ? 'false' : `d.brain_id = ${p.add(search.numericId)}::integer`;
  const exact = `(${idMatch} OR d.readable_id = lower(${text}) OR lower(d.name) = lower(${text}))`;
  const fullText = `(d.search_vector @@ q.tsq OR ${substring})`;
  const matches = `(${fullText} OR d.name %> ${text} OR d.readable_id = lower(${text}) OR ${idMatch})`;
  const order =
    explicitOrder(query, '') ?? 'tier, text_rank DESC, similarity DESC, date_uploaded DESC, brain_id DESC';
  const v3Live = `to_regclass(${p.add(sources.words)}) IS NOT NULL AND EXISTS (
      SELECT FROM pg_attribute WHERE attrelid = to_regclass(${p.add(sources.documents)})
         AND attname = 'name_words' AND NOT attisdropped)`;
  const selects = [
    `ARRAY(SELECT brain_id FROM matched ORDER BY ${order} LIMIT ${p.add(query.limit)} OFFSET ${p.add(query.offset)}) AS ids`,
    '(SELECT count(*) FROM matched) AS total',
    ...(query.facets ?? []).map((facet) => facetSelect(facet, 'matched', 'true')),
    `(${v3Live}) AS v3_live`,
  ];
  return {
    text: `
      WITH q AS (SELECT ${tsQuerySql(text)}),
      matched AS MATERIALIZED (
        SELECT d.brain_id, d.date_uploaded, d.name, d.readable_id, d.species_id, d.atlas_id, d.category_id, d.verified,
               CASE WHEN ${exact} THEN 0
                    WHEN d.name ILIKE ${prefix} OR d.readable_id ILIKE ${prefix} THEN 1
                    WHEN ${fullText} THEN 2
                    ELSE 3 END AS tier,
               coalesce(ts_rank(d.search_vector, q.tsq), 0) AS text_rank,
               word_similarity(${text}, d.name) AS similarity
          FROM ${sources.documents} d CROSS JOIN q
         WHERE ${[...where, matches].join(' AND ')}
      )
      SELECT ${selects.join(',\n')}`,
    values: p.values,
  };
}
