import { namedStatement } from '#shared/infra/postgres/namedStatement';
import { FACET_VALUE_LIMIT } from '#shared/search/facetOrder';
import type { SearchFacet, SearchFilters, SearchQuery, SearchSortField } from '#shared/search/searchIndex';
import { escapeLike, searchWords, type SearchText } from '#shared/search/searchText';

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

function filterConditions(filters: SearchFilters, p: Parameters, alias = 'd'): string[] {
  const conditions = [`NOT ${alias}.removed`, ...placementConditions(filters, alias, p)];
  if (filters.uploaderId !== undefined)
    conditions.push(`${alias}.uploader_id = ${p.add(filters.uploaderId)}::integer`);
  return conditions;
}

/** An embargo whose time has passed, by the database's clock (the rule's SQL form does the same). */
const embargoEnded = (alias: string): string =>
  `(${alias}.visibility = 'embargoed' AND ${alias}.embargo_until <= now())`;

/**
 * The visibility rule (shared/domain/brains/visibility canSeeBrain) and the `visibility` filter,
 * in two parts. The public documents (as stored) are the many: a page reads them through the
 * recency indexes, and the kept counts hold them alone. The others are the few: `hidden` lists the
 * ids of those the viewer may see (an ended embargo, or the viewer among its readers; all of them
 * for staff and for an internal caller without viewer) that match the filters, from the partial
 * indexes of the non-public documents; a page takes them besides the public ones, and a count adds
 * them. A viewer's parameter is the only thing that varies: the statement's text is one per kind
 * of viewer, and stays one named plan.
 * Layout 4 (an upgrade's live generation, written before visibility existed) holds public
 * documents only: nothing is hidden there.
 */
interface VisibilityRule {
  /**
   * An integer[] expression of the visible non-public documents matching the filters; its
   * parameters are added when it is asked for (PostgreSQL refuses a parameter it cannot type).
   */
  readonly hidden: () => string;
  /** Whether the public documents are in the answer (no `visibility` filter, or `public`). */
  readonly publicToo: boolean;
  /** Whether the answer is every document (no rule, no `visibility` filter): no condition needed. */
  readonly everything: boolean;
}

function visibilityRule(
  filters: SearchFilters,
  documents: string,
  layout: SearchLayout,
  p: Parameters,
): VisibilityRule {
  const publicToo = filters.visibility === undefined || filters.visibility === 'public';
  if (layout === 4) return { hidden: () => "'{}'::integer[]", publicToo, everything: publicToo };
  const viewer = filters.viewer;
  const unruled = viewer === undefined || viewer.isStaff;
  const hidden = (): string => {
    const seen = unruled
      ? []
      : viewer.userId === null
        ? [embargoEnded('h')]
        : [`(${embargoEnded('h')} OR h.readers @> ARRAY[${p.add(viewer.userId)}::integer])`];
    const where = [
      ...filterConditions(filters, p, 'h'),
      `h.visibility <> 'public'`,
      ...seen,
      ...effectiveVisibility(filters.visibility),
    ];
    return `ARRAY(SELECT h.brain_id FROM ${documents} h WHERE ${where.join(' AND ')})`;
  };
  return {
    hidden,
    publicToo,
    everything: unruled && filters.visibility === undefined,
  };
}

/** The non-public documents (`h`) of an effective visibility: an ended embargo is public. */
function effectiveVisibility(visibility: SearchFilters['visibility']): string[] {
  switch (visibility) {
    case undefined:
      return [];
    case 'public':
      return [embargoEnded('h')];
    case 'private':
      return [`h.visibility = 'private'`];
    case 'embargoed':
      return [`h.visibility = 'embargoed'`, `(h.embargo_until IS NULL OR h.embargo_until > now())`];
  }
}

/** The rule as a condition on the documents `d`, `hidden` naming the rule's list; undefined: none. */
function visibleCondition(rule: VisibilityRule, layout: SearchLayout, hidden: string): string | undefined {
  if (rule.everything) return undefined;
  if (layout === 4) return 'false';
  return rule.publicToo
    ? `(d.visibility = 'public' OR d.brain_id = ANY(${hidden}))`
    : `d.brain_id = ANY(${hidden})`;
}

function facetSelect(facet: SearchFacet, from: string, where: string): string {
  const column = FACET_COLUMNS[facet];
  return `(SELECT coalesce(json_agg(json_build_array(value, n)), '[]'::json) FROM (
      SELECT d.${column} AS value, count(*) AS n FROM ${from} d WHERE ${where} AND d.${column} IS NOT NULL
       GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT ${FACET_VALUE_LIMIT}) s) AS "${facet}"`;
}

/**
 * A facet summed over the kept counts of the placements the filters select (public documents;
 * `where` undefined: none of them asked), plus the visible non-public documents (`hidden`).
 */
function countedFacetSelect(
  facet: SearchFacet,
  counts: string,
  where: string | undefined,
  documents: string,
  hidden: string,
): string {
  const column = FACET_COLUMNS[facet];
  const kept =
    where === undefined
      ? []
      : [`SELECT c.${column} AS value, c.n FROM ${counts} c WHERE ${where} AND c.${column} IS NOT NULL`];
  const seen = `SELECT x.${column} AS value, 1 AS n FROM ${documents} x
         WHERE x.brain_id = ANY(${hidden}) AND x.${column} IS NOT NULL`;
  return `(SELECT coalesce(json_agg(json_build_array(value, n)), '[]'::json) FROM (
      SELECT u.value, sum(u.n) AS n FROM (${[...kept, seen].join(' UNION ALL ')}) u
       GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT ${FACET_VALUE_LIMIT}) s) AS "${facet}"`;
}

/** The column of the layout-4 statement telling whether the views are v5 by now (textSearch.ts). */
const v5LiveSelect = (documents: string, p: Parameters): string =>
  `EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = to_regclass(${p.add(documents)})
      AND a.attname = 'readers' AND NOT a.attisdropped) AS v5_live`;

/**
 * Without text: newest first along the (filter, date_uploaded, id) indexes. The total and facets
 * come from the kept counts (public documents) plus the visible non-public ones, unless the
 * uploader filter (not a placement column) is given. The rule's list is computed once, in the
 * one-row FROM every part reads.
 */
export function listSql(
  query: SearchQuery,
  documents: string,
  counts: string,
  layout: SearchLayout = 5,
): SqlStatement {
  const p = new Parameters();
  const filters = query.filters ?? {};
  const rule = visibilityRule(filters, documents, layout, p);
  const visible = visibleCondition(rule, layout, 'hidden.ids');
  const where = [...filterConditions(filters, p), ...(visible ? [visible] : [])].join(' AND ');
  // Its parameters exist only where it is used: PostgreSQL refuses a parameter it cannot type.
  const counted = filters.uploaderId === undefined;
  const countedWhere =
    counted && rule.publicToo ? ['true', ...placementConditions(filters, 'c', p)].join(' AND ') : undefined;
  const keptTotal =
    countedWhere === undefined
      ? '0'
      : `(SELECT coalesce(sum(c.n), 0) FROM ${counts} c WHERE ${countedWhere})`;
  const selects = [
    `ARRAY(SELECT d.brain_id FROM ${documents} d WHERE ${where}
       ORDER BY ${explicitOrder(query, 'd') ?? 'd.date_uploaded DESC, d.brain_id DESC'} LIMIT ${p.add(query.limit)} OFFSET ${p.add(query.offset)}) AS ids`,
    counted
      ? `(${keptTotal} + cardinality(hidden.ids))::bigint AS total`
      : `(SELECT count(*) FROM ${documents} d WHERE ${where}) AS total`,
    ...(query.facets ?? []).map((facet) =>
      counted
        ? countedFacetSelect(facet, counts, countedWhere, documents, 'hidden.ids')
        : facetSelect(facet, documents, where),
    ),
    ...(layout === 4 ? [v5LiveSelect(documents, p)] : []),
  ];
  return named(`SELECT ${selects.join(',\n')}\n  FROM (SELECT ${rule.hidden()} AS ids) hidden`, p.values);
}

/** The views (or tables) a text search reads. */
export interface SearchSources {
  readonly documents: string;
  readonly words: string;
  readonly lexemes: string;
}

/**
 * Letters and digits only (ASCII: PostgreSQL's [[:alnum:]] counts them so in any locale), three
 * or more: such a text occurs in a name exactly when it occurs in one of the name's words
 * (NAME_WORDS_SQL), so the dictionary's trigram index finds those words and the GIN index of the
 * documents' words their documents. Other texts (a space, punctuation, shorter) are looked for in
 * the name itself.
 */
export const WORD_TEXT = /^[a-z0-9]{3,}$/i;

/**
 * A word prefix starting more lexemes than this is matched as a prefix (a one-letter word must not
 * become thousands of lexemes); below, as the lexemes themselves.
 */
export const EXPANDED_LEXEMES = 64;

/**
 * The layout a statement reads: 5 (the visibility columns) by default, 4 while an upgrade
 * rebuilds v5 beside a live v4 generation (textSearch.ts).
 */
export type SearchLayout = 4 | 5;

/**
 * With text: every way of matching is an OR of index-backed conditions (full text and the name's
 * words in the GIN index with the filters, the readable_id btree, the primary key), matched once
 * into a CTE that the page, the total and the facets all read. Typos and substrings are looked up
 * in the small dictionary of the names' words first (pg_trgm's "Text Search Integration"); their
 * documents then come from the GIN index of the documents' words, instead of a trigram recheck of
 * every candidate's name. A typo matches when every word of the text is like some word of the name
 * (word similarity at pg_trgm's threshold; Elasticsearch's fuzzy match also asks every word to
 * match). Tiers rank exact id / readable_id / name first, then name or readable_id prefixes, then
 * full-text rank, then typo similarity.
 * Each word of the text matches as a word prefix (`q.tsq`). The documents are found with `e.match`,
 * the same query with each prefix replaced by the lexemes of the dictionary it starts
 * (expandedQuerySql): the GIN index then reads those lexemes' entries together with the filters'
 * instead of collecting every document a prefix matches before the filters apply. Tiers and ranks
 * read q.tsq itself: ts_rank counts a query's operands, which the expansion changes.
 * The visibility rule's list of visible non-public documents is `q.hidden` (visibilityRule).
 * Layout 4 (no visibility columns: every document public) has no rule; its `v5_live` column says
 * whether the views point at a v5 generation by now (catalogue lookups, no round trip of their
 * own), so that the search after a swap sends the v5 statement.
 */
export function searchSql(
  query: SearchQuery,
  search: SearchText,
  sources: SearchSources,
  layout: SearchLayout = 5,
): SqlStatement {
  const p = new Parameters();
  const filters = query.filters ?? {};
  const rule = visibilityRule(filters, sources.documents, layout, p);
  const visible = visibleCondition(rule, layout, 'q.hidden');
  const where = [...filterConditions(filters, p), ...(visible ? [visible] : [])];
  const text = p.add(search.text);
  const explicit = explicitOrder(query, 'm');
  const lookups: string[] = [];
  /** A column of `q`: the dictionary's words that meet `condition` (on `w.word`). */
  const wordsWhere = (condition: string): string => {
    const column = `q.words${lookups.length}`;
    lookups.push(`ARRAY(SELECT w.word FROM ${sources.words} w WHERE ${condition}) AS words${lookups.length}`);
    return column;
  };
  // Any substring of the name matches (decisions.md); below three characters no trigram index can
  // help and this condition is checked row by row.
  const substringWords = WORD_TEXT.test(search.text)
    ? wordsWhere(`w.word LIKE '%' || lower(${text}) || '%'`)
    : undefined;
  const substring = substringWords
    ? `d.name_words && ${substringWords}`
    : `d.name ILIKE ${p.add(`%${escapeLike(search.text)}%`)}`;
  // `word %> $1` is `$1 <% word` (word similarity) as the trigram index's condition reads it.
  const typoWords = searchWords(search.text).map((word) => wordsWhere(`w.word %> ${p.add(word)}`));
  const typo =
    typoWords.length === 0
      ? 'false'
      : `(${typoWords.map((words) => `d.name_words && ${words}`).join(' AND ')})`;
  const idMatch =
    search.numericId === undefined ? 'false' : `d.brain_id = ${p.add(search.numericId)}::integer`;
  const fullText = `(d.search_vector @@ q.tsq OR ${substring})`;
  // One word: its substring and typo words are one lookup of the documents' words, not two.
  const [typoWord, ...more] = typoWords;
  const nameWords =
    substringWords && typoWord && more.length === 0
      ? `d.name_words && (${substringWords} || ${typoWord})`
      : `${substring} OR ${typo}`;
  const matches = `(d.search_vector @@ e.match OR ${nameWords} OR d.readable_id = lower(${text}) OR ${idMatch})`;
  const { kept, read } = matchedColumns(explicit !== undefined, query.facets ?? []);
  const order =
    explicit ?? 'm.tier, m.text_rank DESC, m.similarity DESC, m.date_uploaded DESC, m.brain_id DESC';
  const facets = query.facets ?? [];
  const selects = [
    `ARRAY(SELECT m.brain_id FROM matched m ORDER BY ${order} LIMIT ${p.add(query.limit)} OFFSET ${p.add(query.offset)}) AS ids`,
    ...(facets.length === 0
      ? ['(SELECT count(*) FROM matched) AS total']
      : [
          '(SELECT coalesce(sum(c.n), 0) FROM counted c)::bigint AS total',
          ...facets.map((facet) => countedMatchesSelect(facet)),
        ]),
    ...(layout === 4 ? [v5LiveSelect(sources.documents, p)] : []),
  ];
  const hidden = visible?.includes('q.hidden') ? [`${rule.hidden()} AS hidden`] : [];
  return {
    text: `
      WITH RECURSIVE q AS (
        SELECT ${[tsQuerySql(text), ...(explicit ? [] : loweredTextSql(text)), ...lookups, ...hidden].join(',\n               ')}
      ),${expandedQuerySql(text, sources.lexemes)}
      matched AS MATERIALIZED (
        SELECT ${[...kept.map((c) => `t.${c}`), ...(explicit ? [] : ['t.tier', ...relevanceRanks(text)])].join(', ')}
          FROM (
            SELECT ${[
              ...read.map((c) => `d.${c}`),
              ...(explicit ? [] : [`q.tsq, ${tierSql(idMatch, fullText)} AS tier`]),
            ].join(', ')}
              FROM ${sources.documents} d CROSS JOIN q CROSS JOIN e
             WHERE ${[...where, matches].join(' AND ')}
            OFFSET 0) t
      )${facets.length === 0 ? '' : `,\n      counted AS MATERIALIZED (${matchCountsSql(facets)})`}
      SELECT ${selects.join(',\n')}`,
    values: p.values,
  };
}

/**
 * The total and every facet's counts of the matches in one pass over them: the matches are counted
 * per combination of the facets' values (one hash table, one lookup per match; a few hundred
 * combinations whatever the number of matches), and the total and each facet are sums over those
 * few rows, as the kept counts answer a list without text.
 */
function matchCountsSql(facets: readonly SearchFacet[]): string {
  const columns = facets.map((facet) => `m.${FACET_COLUMNS[facet]}`);
  return `SELECT ${columns.join(', ')}, count(*) AS n FROM matched m GROUP BY ${columns.join(', ')}`;
}

/** A facet's column of the answer: its values' counts summed from `counted`, the most frequent first. */
function countedMatchesSelect(facet: SearchFacet): string {
  const column = FACET_COLUMNS[facet];
  return `(SELECT coalesce(json_agg(json_build_array(s.value, s.n)), '[]'::json) FROM (
      SELECT c.${column} AS value, sum(c.n) AS n FROM counted c WHERE c.${column} IS NOT NULL
       GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT ${FACET_VALUE_LIMIT}) s) AS "${facet}"`;
}

/**
 * The columns of each match that the page and the facets read (`kept`; the tier and ranks besides,
 * by relevance), and those read of the documents to compute them: the matches are materialized,
 * narrow rows cost less to keep and sort.
 */
function matchedColumns(explicit: boolean, facets: readonly SearchFacet[]) {
  const kept = [
    'brain_id',
    'date_uploaded',
    ...(explicit ? ['name', 'readable_id'] : []),
    ...facets.map((facet) => FACET_COLUMNS[facet]),
  ];
  return { kept, read: [...new Set([...kept, ...(explicit ? [] : ['name', 'search_vector'])])] };
}

/** The columns of `q` the tier reads: the text lowercased once, and its length in characters. */
const loweredTextSql = (text: string): string[] => [
  `lower(${text}) AS text_lower`,
  `char_length(${text}) AS text_chars`,
];

/**
 * The tier of a match (see searchSql): 0 exact, 1 a prefix of the name or readable_id, 2 full
 * text or substring, 3 a typo only. It is computed for every match, most of them tier 2, so each
 * step is the cheapest form of its test: the name's prefix is compared as its first characters
 * lowercased (lower() maps each character to one character, so this is `lower(name) LIKE
 * lower(text) || '%'` without lowercasing the whole name or matching a pattern), an exact name is
 * such a prefix of the text's length, and a readable_id is lowercase already (readableIdFor).
 */
function tierSql(idMatch: string, fullText: string): string {
  return `CASE WHEN ${idMatch} OR d.readable_id = q.text_lower THEN 0
                    WHEN lower(left(d.name, q.text_chars)) = q.text_lower
                      THEN CASE WHEN char_length(d.name) = q.text_chars THEN 0 ELSE 1 END
                    WHEN starts_with(d.readable_id, q.text_lower) THEN 1
                    WHEN ${fullText} THEN 2
                    ELSE 3 END`;
}

/**
 * The relevance order's ranks (of the matched rows `t`): the full-text and prefix tiers by text
 * rank, the typo tier by similarity, the few exact matches by both; then newest first. Each rank
 * is computed only for the rows whose tier it orders: the full-text tier is most of a common
 * word's matches, and the prefix tier most of a name's first words' (every "thalamus, …" for
 * "thala"), where a similarity per row cost as much as the matching and told little: the text
 * starts each of those names. Computed as the matches are (the tier once, in the subquery), only
 * they are kept: not each match's tsvector.
 */
function relevanceRanks(text: string): string[] {
  return [
    'CASE WHEN t.tier < 3 THEN coalesce(ts_rank(t.search_vector, t.tsq), 0) ELSE 0 END AS text_rank',
    `CASE WHEN t.tier IN (0, 3) THEN word_similarity(${text}, t.name) ELSE 0 END AS similarity`,
  ];
}

/** A lexeme (an SQL expression) quoted as a tsquery operand. */
const quotedLexeme = (lexeme: string): string =>
  `'''' || replace(replace(${lexeme}, '\\', '\\\\'), '''', '''''') || ''''`;

/** Every word of the text as a word prefix, all of them required: `tsq`, NULL for no word. */
const tsQuerySql = (text: string): string => `${tsQueryExpression(text)} AS tsq`;

/** The text's query (see tsQuerySql) as an expression. */
export function tsQueryExpression(text: string): string {
  return `to_tsquery('simple', nullif(array_to_string(ARRAY(
          SELECT ${quotedLexeme('lexeme')} || ':*'
            FROM unnest(tsvector_to_array(to_tsvector('simple', ${text}))) AS lexeme), ' & '), ''))`;
}

/**
 * The CTEs after `q` ending with `e.match`: q.tsq with each prefix operand rewritten (ts_rewrite,
 * one rule after the other) to the lexemes of the dictionary that start with it, or to the word
 * itself when none does (no document has it then either). The lexemes a word starts follow it in
 * byte order: the first EXPANDED_LEXEMES + 1 from the word on are read, and a word starting more
 * keeps its prefix. A document matches e.match exactly when it matches q.tsq, since the dictionary
 * holds every lexeme of the live documents. (ts_rewrite finds an operand by its lexeme: all of
 * q.tsq's are prefixes, and a later rule rewriting a lexeme that an earlier one brought in only
 * adds lexemes which the earlier prefix starts as well.)
 */
function expandedQuerySql(text: string, lexemes: string): string {
  return `
      rules AS (
        SELECT row_number() OVER () AS i, (${quotedLexeme('w')} || ':*')::tsquery AS target,
               coalesce(x.lexemes, ${quotedLexeme('w')})::tsquery AS substitute
          FROM unnest(tsvector_to_array(to_tsvector('simple', ${text}))) AS w
         CROSS JOIN LATERAL (
           SELECT string_agg(${quotedLexeme('l.lexeme')}, ' | ') FILTER (WHERE l.lexeme ^@ w) AS lexemes,
                  count(*) FILTER (WHERE l.lexeme ^@ w) AS n
             FROM (SELECT l.lexeme FROM ${lexemes} l WHERE l.lexeme >= w COLLATE "C"
                    ORDER BY l.lexeme LIMIT ${EXPANDED_LEXEMES + 1}) l) x
         WHERE x.n <= ${EXPANDED_LEXEMES}
      ),
      rewritten AS (
        SELECT 0::bigint AS i, q.tsq FROM q
        UNION ALL
        SELECT r.i, ts_rewrite(w.tsq, r.target, r.substitute) FROM rewritten w JOIN rules r ON r.i = w.i + 1
      ),
      e AS (SELECT (SELECT w.tsq FROM rewritten w ORDER BY w.i DESC LIMIT 1) AS match),`;
}
