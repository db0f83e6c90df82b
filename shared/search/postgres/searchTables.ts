import type { PoolClient } from 'pg';
import { READ_MODEL_SCHEMA } from '#shared/projections/projection';

/**
 * Physical names of one index (`name`, e.g. "brain_search"): a table per generation in the
 * read-model schema (documents and their counts), read through views in public that a rebuild
 * repoints atomically, like the projections' versioned tables.
 */
export interface SearchTableNames {
  readonly name: string;
  readonly generations: string;
  /** Generation numbers are never reused: a superseded rebuild must not find a newer one's row. */
  readonly generationSequence: string;
  readonly documentsView: string;
  readonly countsView: string;
  readonly wordsView: string;
  readonly lexemesView: string;
  documents(generation: number): string;
  counts(generation: number): string;
  words(generation: number): string;
  lexemes(generation: number): string;
}

/**
 * One generation's physical tables: the documents and what triggers keep from them, their counts,
 * their names' words and their full-text lexemes.
 */
export interface SearchTables {
  readonly documents: string;
  readonly counts: string;
  readonly words: string;
  readonly lexemes: string;
}

type TriggerOp = 'insert' | 'update' | 'delete';

const NAME = /^[a-z][a-z0-9_]{0,40}$/;

export function searchTableNames(name: string): SearchTableNames {
  if (!NAME.test(name)) throw new Error(`invalid search index name: ${name}`);
  const rm = (table: string): string => `"${READ_MODEL_SCHEMA}"."${table}"`;
  return {
    name,
    generations: rm(`${name}_generations`),
    generationSequence: rm(`${name}_generation_seq`),
    documentsView: `public."${name}"`,
    countsView: `public."${name}_counts"`,
    wordsView: `public."${name}_words"`,
    lexemesView: `public."${name}_lexemes"`,
    documents: (generation) => rm(`${name}_g${generation}`),
    counts: (generation) => rm(`${name}_counts_g${generation}`),
    words: (generation) => rm(`${name}_words_g${generation}`),
    lexemes: (generation) => rm(`${name}_lexemes_g${generation}`),
  };
}

/**
 * The words of a name: its lowercased runs of letters and digits. A text of letters and digits
 * only occurs in a name exactly when it occurs in one of these words (it cannot span a separator),
 * which is what lets the words dictionary answer substring search (searchQuerySql.ts).
 */
export const NAME_WORDS_SQL = (name: string): string =>
  `regexp_split_to_array(lower(coalesce(${name}, '')), '[^[:alnum:]]+')`;

/**
 * Documents with their tombstones (`removed`): a removal must outlive the row so that a replayed
 * older upsert cannot resurrect it. Weights: name and readable_id A, species/atlas/category B,
 * description C. 'simple' (no stemming, no stop words): names and ids are not English prose.
 */
const DOCUMENT_COLUMNS = `
  brain_id integer PRIMARY KEY,
  removed boolean NOT NULL,
  position_commit bigint NOT NULL,
  position_prepare bigint NOT NULL,
  readable_id text,
  name text,
  description text,
  species_id integer,
  species_name text,
  scientific_name text,
  atlas_id integer,
  atlas_name text,
  category_id integer,
  category_name text,
  verified boolean,
  uploader_id integer,
  date_uploaded timestamptz,
  search_vector tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('simple', coalesce(name, '') || ' ' || coalesce(readable_id, '')), 'A') ||
    setweight(to_tsvector('simple', coalesce(species_name, '') || ' ' || coalesce(scientific_name, '')
      || ' ' || coalesce(atlas_name, '') || ' ' || coalesce(category_name, '')), 'B') ||
    setweight(to_tsvector('simple', coalesce(description, '')), 'C')
  ) STORED,
  name_words text[] GENERATED ALWAYS AS (${NAME_WORDS_SQL('name')}) STORED`;

/**
 * The placement columns the counts are kept per combination of (a cross-tab): any total or facet
 * under filters on these columns alone is a sum over its rows, a few hundred whatever the
 * catalogue's size. Facets and filters use the same names (FACET_COLUMNS in searchQuerySql.ts).
 */
export const PLACEMENT_COLUMNS = ['species_id', 'atlas_id', 'category_id', 'verified'] as const;
const PLACEMENT = PLACEMENT_COLUMNS.join(', ');

/**
 * One statement adding the changed rows' deltas to the counts, in key order: writers that touch
 * the same counts lock them in the same order and cannot deadlock.
 */
function countDeltasSql(sources: readonly ['old_rows' | 'new_rows', 1 | -1][]): string {
  const deltas = sources.map(
    ([rows, sign]) => `SELECT ${PLACEMENT}, ${sign} AS delta FROM ${rows} WHERE NOT removed`,
  );
  return `INSERT INTO %s AS c (${PLACEMENT}, n)
    SELECT ${PLACEMENT}, sum(delta) FROM (${deltas.join(' UNION ALL ')}) d
     GROUP BY ${PLACEMENT} HAVING sum(delta) <> 0 ORDER BY ${PLACEMENT}
    ON CONFLICT (${PLACEMENT}) DO UPDATE SET n = c.n + EXCLUDED.n`;
}

const TRIGGERS: Readonly<
  Record<TriggerOp, { referencing: string; sources: ['old_rows' | 'new_rows', 1 | -1][] }>
> = {
  insert: { referencing: 'NEW TABLE AS new_rows', sources: [['new_rows', 1]] },
  update: {
    referencing: 'OLD TABLE AS old_rows NEW TABLE AS new_rows',
    sources: [
      ['old_rows', -1],
      ['new_rows', 1],
    ],
  },
  delete: { referencing: 'OLD TABLE AS old_rows', sources: [['old_rows', -1]] },
};

/** Every generation's triggers call this one function, naming their counts table as argument. */
const COUNT_FUNCTION = `"${READ_MODEL_SCHEMA}"."search_count_deltas"`;

/**
 * Transition tables are visible to the dynamic statements too; format() puts the counts table
 * (a trigger argument this module wrote, never user input) into the statement.
 */
const COUNT_FUNCTION_SQL = `CREATE OR REPLACE FUNCTION ${COUNT_FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $body$
  BEGIN
    IF TG_OP = 'INSERT' THEN EXECUTE format('${countDeltasSql(TRIGGERS.insert.sources).replaceAll("'", "''")}', TG_ARGV[0]);
    ELSIF TG_OP = 'UPDATE' THEN EXECUTE format('${countDeltasSql(TRIGGERS.update.sources).replaceAll("'", "''")}', TG_ARGV[0]);
    ELSE EXECUTE format('${countDeltasSql(TRIGGERS.delete.sources).replaceAll("'", "''")}', TG_ARGV[0]);
    END IF;
    -- A placement nothing has any more leaves no row: the counts are then the same whatever batches
    -- built them (a rebuild compares equal row for row). Locked in key order, like the upsert; by
    -- ctid, since a NULL (no atlas) never equals itself.
    EXECUTE format('DELETE FROM %1$s WHERE n = 0 AND ctid = ANY(ARRAY(
      SELECT ctid FROM %1$s WHERE n = 0 ORDER BY ${PLACEMENT} FOR UPDATE))', TG_ARGV[0]);
    RETURN NULL;
  END $body$`;

/**
 * A dictionary kept by triggers: the distinct values (`column`) of an array over the live documents
 * (`values`, of a row `r`), each with its number of occurrences. Every generation's triggers of
 * one dictionary call its one function, naming their table.
 */
interface Dictionary {
  readonly function: string;
  readonly column: string;
  readonly values: string;
}

/** The names' words: typo and substring search look them up (searchQuerySql.ts). */
const WORDS: Dictionary = {
  function: `"${READ_MODEL_SCHEMA}"."search_word_deltas"`,
  column: 'word',
  values: 'r.name_words',
};

/** The full-text lexemes: a word prefix is expanded to those it starts (searchQuerySql.ts). */
const LEXEMES: Dictionary = {
  function: `"${READ_MODEL_SCHEMA}"."search_lexeme_deltas"`,
  column: 'lexeme',
  values: 'tsvector_to_array(r.search_vector)',
};

/**
 * One statement adding the changed rows' values to the dictionary's counts (occurrences among
 * live documents), in value order like the counts; it returns the values whose count reached zero.
 */
function dictionaryDeltasSql(
  { column, values }: Dictionary,
  sources: readonly ['old_rows' | 'new_rows', 1 | -1][],
): string {
  const deltas = sources.map(
    ([rows, sign]) => `SELECT v, ${sign} AS delta FROM ${rows} r CROSS JOIN unnest(${values}) AS v
       WHERE NOT r.removed AND v <> ''`,
  );
  return `WITH changed AS (
      INSERT INTO %s AS t (${column}, n)
      SELECT v, sum(delta) FROM (${deltas.join(' UNION ALL ')}) d
       GROUP BY v HAVING sum(delta) <> 0 ORDER BY v
      ON CONFLICT (${column}) DO UPDATE SET n = t.n + EXCLUDED.n
      RETURNING t.${column}, t.n)
    SELECT coalesce(array_agg(${column}), '{}') FROM changed WHERE n = 0`;
}

/**
 * A dictionary holds exactly the values of the live documents (a rebuild compares equal row for
 * row), so a value that no document has any more is deleted, by the statement after the one that
 * brought its count to zero (a statement cannot see its own update of a row).
 */
const dictionaryFunctionSql = (dictionary: Dictionary): string => {
  const deltas = (op: TriggerOp): string =>
    dictionaryDeltasSql(dictionary, TRIGGERS[op].sources).replaceAll("'", "''");
  return `CREATE OR REPLACE FUNCTION ${dictionary.function}() RETURNS trigger LANGUAGE plpgsql AS $body$
  DECLARE
    unused text[];
  BEGIN
    IF TG_OP = 'INSERT' THEN EXECUTE format('${deltas('insert')}', TG_ARGV[0]) INTO unused;
    ELSIF TG_OP = 'UPDATE' THEN EXECUTE format('${deltas('update')}', TG_ARGV[0]) INTO unused;
    ELSE EXECUTE format('${deltas('delete')}', TG_ARGV[0]) INTO unused;
    END IF;
    IF cardinality(unused) > 0 THEN
      EXECUTE format('DELETE FROM %s WHERE ${dictionary.column} = ANY($1) AND n = 0', TG_ARGV[0]) USING unused;
    END IF;
    RETURN NULL;
  END $body$`;
};

/** Statement-level triggers of `documents` calling `fn` with `table` as argument, named `<prefix>_<op>`. */
async function createTriggers(
  client: PoolClient,
  documents: string,
  prefix: string,
  fn: string,
  table: string,
): Promise<void> {
  for (const [op, trigger] of Object.entries(TRIGGERS) as [TriggerOp, (typeof TRIGGERS)[TriggerOp]][])
    await client.query(
      `CREATE TRIGGER "${prefix}_${op}" AFTER ${op.toUpperCase()} ON ${documents}
       REFERENCING ${trigger.referencing} FOR EACH STATEMENT
       EXECUTE FUNCTION ${fn}('${table.replaceAll("'", "''")}')`,
    );
}

/**
 * Creates one generation's tables (the caller holds the projections' schema lock: the shared
 * count and dictionary functions are replaced under it). Counts per placement are kept exact by
 * statement-level triggers, so a page without text or uploader reads its total and facets from a
 * few hundred rows instead of counting the documents it filters; so are the dictionaries of the
 * names' words, which text search looks typos and substrings up in, and of the full-text lexemes,
 * which it expands a word prefix to. The lexemes compare byte-wise ("C"): a prefix is then a
 * range of their primary key.
 * Secondary indexes come apart (createSearchIndexes): a rebuild may load faster without them.
 */
export async function createSearchTables(client: PoolClient, tables: SearchTables): Promise<void> {
  await client.query(`CREATE SCHEMA IF NOT EXISTS "${READ_MODEL_SCHEMA}"`);
  await client.query(COUNT_FUNCTION_SQL);
  await client.query(dictionaryFunctionSql(WORDS));
  await client.query(dictionaryFunctionSql(LEXEMES));
  await client.query(`CREATE TABLE ${tables.documents} (${DOCUMENT_COLUMNS})`);
  await client.query(`CREATE TABLE ${tables.words} (word text PRIMARY KEY, n bigint NOT NULL)`);
  await client.query(
    `CREATE TABLE ${tables.lexemes} (lexeme text COLLATE "C" PRIMARY KEY, n bigint NOT NULL)`,
  );
  await client.query(
    `CREATE TABLE ${tables.counts} (species_id integer, atlas_id integer, category_id integer, verified boolean,
       n bigint NOT NULL, UNIQUE NULLS NOT DISTINCT (${PLACEMENT}))`,
  );
  await createTriggers(client, tables.documents, 'count', COUNT_FUNCTION, tables.counts);
  await createTriggers(client, tables.documents, 'words', WORDS.function, tables.words);
  await createTriggers(client, tables.documents, 'lexemes', LEXEMES.function, tables.lexemes);
}

/** A generation of a standalone index (see createSearchTables). */
export async function createGeneration(
  client: PoolClient,
  names: SearchTableNames,
  generation: number,
): Promise<void> {
  await createSearchTables(client, generationTables(names, generation));
}

export function generationTables(names: SearchTableNames, generation: number): SearchTables {
  return {
    documents: names.documents(generation),
    counts: names.counts(generation),
    words: names.words(generation),
    lexemes: names.lexemes(generation),
  };
}

/**
 * The text conditions and the placement filters in one GIN index (btree_gin): each way a text
 * matches (full text, the name's words the dictionary proposed) is looked up together with the
 * filters, so a species' matches come out of the index as such rather than as all the text's
 * matches ANDed with all the species' documents afterwards; without filters it serves the text
 * alone. Beside it: the dictionary's trigrams (which words are like or contain the text), trigrams
 * of the name (substrings that are not one word), the exact readable_id, and recency within each
 * filter for pages without text. The recency ones hold live documents only (every query asks for
 * NOT removed), so a page's ids come from an index-only scan, `removed` being implied by the
 * predicate rather than read from the heap. The text ones stay whole: partial, they made the
 * planner filter a species' documents row by row (typo similarity on each) instead of ANDing the
 * species with the text's bitmaps.
 */
export async function createSearchIndexes(
  client: PoolClient,
  { documents, words }: SearchTables,
): Promise<void> {
  const live = 'WHERE NOT removed';
  await client.query(`CREATE INDEX ON ${documents} USING gin (${PLACEMENT}, search_vector, name_words)`);
  await client.query(`CREATE INDEX ON ${documents} USING gin (name gin_trgm_ops)`);
  await client.query(`CREATE INDEX ON ${words} USING gin (word gin_trgm_ops)`);
  await client.query(`CREATE INDEX ON ${documents} (readable_id)`);
  await client.query(`CREATE INDEX ON ${documents} (date_uploaded DESC, brain_id DESC) ${live}`);
  for (const column of ['species_id', 'atlas_id', 'category_id', 'uploader_id', 'verified'])
    await client.query(`CREATE INDEX ON ${documents} (${column}, date_uploaded DESC, brain_id DESC) ${live}`);
  await client.query(`ANALYZE ${documents}`);
  await client.query(`ANALYZE ${words}`);
}

/** The extensions the tables and indexes need: trusted, so the service's role may create them. */
export async function createSearchExtensions(client: PoolClient): Promise<void> {
  await client.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  await client.query('CREATE EXTENSION IF NOT EXISTS btree_gin');
}

export async function pointViews(
  client: PoolClient,
  names: SearchTableNames,
  generation: number,
): Promise<void> {
  await client.query(
    `CREATE OR REPLACE VIEW ${names.documentsView} AS SELECT * FROM ${names.documents(generation)}`,
  );
  await client.query(
    `CREATE OR REPLACE VIEW ${names.countsView} AS SELECT * FROM ${names.counts(generation)}`,
  );
  await client.query(`CREATE OR REPLACE VIEW ${names.wordsView} AS SELECT * FROM ${names.words(generation)}`);
  await client.query(
    `CREATE OR REPLACE VIEW ${names.lexemesView} AS SELECT * FROM ${names.lexemes(generation)}`,
  );
}

export async function dropGeneration(
  client: PoolClient,
  names: SearchTableNames,
  generation: number,
): Promise<void> {
  const { documents, counts, words, lexemes } = generationTables(names, generation);
  await client.query(`DROP TABLE IF EXISTS ${documents}, ${counts}, ${words}, ${lexemes}`);
}
