import type { PoolClient } from 'pg';
import { READ_MODEL_SCHEMA } from '#shared/projections/projection';
import { migrateSearchFunctions } from './searchMigrations';
import { dropTableAndCompanions } from '#shared/infra/postgres/companionFunctions';
import { type SearchTables, createKeptTableTriggers } from './searchTriggers';

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

export type { SearchTables } from './searchTriggers';

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
 * description C. 'simple' (no stemming, no stopwords): names and ids are not English prose.
 * `readers`: the uploader and the collaborators (BrainSearchDocument.readers).
 * The columns are in the order a search reads them: a text search decodes each of its matches up to
 * the last column it needs, and a column after a text one is found only by walking every text before
 * it. So the fixed-width columns every query filters, counts and orders by come first, then the
 * name, readable_id and the generated text columns the match and its rank read, and last the names
 * and description that only feed search_vector (about half a row's bytes; v6: a common word's
 * statement spent about a tenth of its time walking them). Views are repointed by name
 * (pointViews), so the order of a generation's columns is its own.
 */
const DOCUMENT_COLUMNS = `
  brain_id integer PRIMARY KEY,
  removed boolean NOT NULL,
  verified boolean,
  species_id integer,
  atlas_id integer,
  category_id integer,
  uploader_id integer,
  date_uploaded timestamptz,
  embargo_until timestamptz,
  position_commit bigint NOT NULL,
  position_prepare bigint NOT NULL,
  visibility text,
  readable_id text,
  name text,
  search_vector tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('simple', coalesce(name, '') || ' ' || coalesce(readable_id, '')), 'A') ||
    setweight(to_tsvector('simple', coalesce(species_name, '') || ' ' || coalesce(scientific_name, '')
      || ' ' || coalesce(atlas_name, '') || ' ' || coalesce(category_name, '')), 'B') ||
    setweight(to_tsvector('simple', coalesce(description, '')), 'C')
  ) STORED,
  name_words text[] GENERATED ALWAYS AS (${NAME_WORDS_SQL('name')}) STORED,
  readers integer[],
  description text,
  species_name text,
  scientific_name text,
  atlas_name text,
  category_name text`;

/**
 * The placement columns the counts are kept per combination of (a cross-tab): any total or facet
 * under filters on these columns alone is a sum over its rows, a few hundred whatever the
 * catalogue's size. Facets and filters use the same names (FACET_COLUMNS in searchQuerySql.ts),
 * and so does the function that keeps the counts (searchTriggers.ts).
 */
export const PLACEMENT_COLUMNS = ['species_id', 'atlas_id', 'category_id', 'verified'] as const;
const PLACEMENT = PLACEMENT_COLUMNS.join(', ');

/**
 * Creates one generation's tables (the caller holds the projections' schema lock: the shared
 * functions of the generations made before searchTriggers.ts are migrated under it). Counts per placement of the public
 * documents (as stored; the others are counted at query time, for whoever may see them) are kept exact by
 * statement-level triggers, so a page without text or uploader reads its total and facets from a
 * few hundred rows instead of counting the documents it filters; so are the dictionaries of the
 * names' words, which text search looks typos and substrings up in, and of the full-text lexemes,
 * which it expands a word prefix to. The lexemes compare byte-wise ("C"): a prefix is then a
 * range of their primary key.
 * Secondary indexes come apart (createSearchIndexes): a rebuild may load faster without them.
 */
export async function createSearchTables(client: PoolClient, tables: SearchTables): Promise<void> {
  await migrateSearchFunctions(client);
  await client.query(`CREATE TABLE ${tables.documents} (${DOCUMENT_COLUMNS})`);
  await client.query(`CREATE TABLE ${tables.words} (word text PRIMARY KEY, n bigint NOT NULL)`);
  await client.query(
    `CREATE TABLE ${tables.lexemes} (lexeme text COLLATE "C" PRIMARY KEY, n bigint NOT NULL)`,
  );
  await client.query(
    `CREATE TABLE ${tables.counts} (species_id integer, atlas_id integer, category_id integer, verified boolean,
       n bigint NOT NULL, UNIQUE NULLS NOT DISTINCT (${PLACEMENT}))`,
  );
  await createKeptTableTriggers(client, tables, PLACEMENT);
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
  // What was written since a position: the in-memory index's catch-up (shared/search/memory).
  await client.query(`CREATE INDEX ON ${documents} (position_commit, position_prepare)`);
  await client.query(
    `CREATE INDEX ON ${documents} (date_uploaded DESC, brain_id DESC) INCLUDE (visibility) ${live}`,
  );
  for (const column of ['species_id', 'atlas_id', 'category_id', 'uploader_id', 'verified'])
    await client.query(
      `CREATE INDEX ON ${documents} (${column}, date_uploaded DESC, brain_id DESC) INCLUDE (visibility) ${live}`,
    );
  const hidden = `${live} AND visibility <> 'public'`;
  await client.query(`CREATE INDEX ON ${documents} USING gin (readers) ${hidden}`);
  await client.query(`CREATE INDEX ON ${documents} (visibility, embargo_until) ${hidden}`);
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
  // Dropped and created rather than replaced: a generation of another layout may order its columns
  // otherwise (DOCUMENT_COLUMNS), and CREATE OR REPLACE VIEW keeps the old view's order. The caller's
  // transaction makes the swap atomic for readers.
  await client.query(`DROP VIEW IF EXISTS ${names.documentsView}`);
  await client.query(`CREATE VIEW ${names.documentsView} AS SELECT * FROM ${names.documents(generation)}`);
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
  await dropTableAndCompanions(client, documents);
  await client.query(`DROP TABLE IF EXISTS ${counts}, ${words}, ${lexemes}`);
}
