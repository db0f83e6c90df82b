import type { PoolClient } from 'pg';
import { READ_MODEL_SCHEMA } from '../../projections/projection';

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
  documents(generation: number): string;
  counts(generation: number): string;
}

/** One generation's physical tables: the documents and their trigger-kept counts. */
export interface SearchTables {
  readonly documents: string;
  readonly counts: string;
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
    documents: (generation) => rm(`${name}_g${generation}`),
    counts: (generation) => rm(`${name}_counts_g${generation}`),
  };
}

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
  ) STORED`;

/** Facet values a live document counts under; 'all' is the total. */
const COUNTED_VALUES = `(VALUES ('all', 0::bigint), ('species', r.species_id::bigint), ('atlas', r.atlas_id::bigint),
  ('category', r.category_id::bigint), ('verified', r.verified::int::bigint)) AS f(facet, value)`;

/**
 * One statement adding the changed rows' deltas to the counts, in key order: writers that touch
 * the same counts lock them in the same order and cannot deadlock.
 */
function countDeltasSql(sources: readonly ['old_rows' | 'new_rows', 1 | -1][]): string {
  const deltas = sources.map(
    ([rows, sign]) =>
      `SELECT f.facet, f.value, ${sign} AS delta FROM ${rows} r CROSS JOIN LATERAL ${COUNTED_VALUES}
        WHERE NOT r.removed AND f.value IS NOT NULL`,
  );
  return `INSERT INTO %s AS c (facet, value, n)
    SELECT facet, value, sum(delta) FROM (${deltas.join(' UNION ALL ')}) d
     GROUP BY facet, value HAVING sum(delta) <> 0 ORDER BY facet, value
    ON CONFLICT (facet, value) DO UPDATE SET n = c.n + EXCLUDED.n`;
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
    RETURN NULL;
  END $body$`;

/**
 * Creates one generation's tables (the caller holds the projections' schema lock: the shared
 * count function is replaced under it). Counts are kept exact by statement-level triggers, so an
 * unfiltered page reads its total and facets from a few rows instead of counting a million.
 * Secondary indexes come apart (createSearchIndexes): a rebuild may load faster without them.
 */
export async function createSearchTables(client: PoolClient, tables: SearchTables): Promise<void> {
  await client.query(`CREATE SCHEMA IF NOT EXISTS "${READ_MODEL_SCHEMA}"`);
  await client.query(COUNT_FUNCTION_SQL);
  await client.query(`CREATE TABLE ${tables.documents} (${DOCUMENT_COLUMNS})`);
  await client.query(
    `CREATE TABLE ${tables.counts} (facet text NOT NULL, value bigint NOT NULL, n bigint NOT NULL, PRIMARY KEY (facet, value))`,
  );
  for (const [op, trigger] of Object.entries(TRIGGERS) as [TriggerOp, (typeof TRIGGERS)[TriggerOp]][])
    await client.query(
      `CREATE TRIGGER "count_${op}" AFTER ${op.toUpperCase()} ON ${tables.documents}
       REFERENCING ${trigger.referencing} FOR EACH STATEMENT
       EXECUTE FUNCTION ${COUNT_FUNCTION}('${tables.counts.replaceAll("'", "''")}')`,
    );
}

/** A generation of a standalone index (see createSearchTables). */
export async function createGeneration(
  client: PoolClient,
  names: SearchTableNames,
  generation: number,
): Promise<void> {
  await createSearchTables(client, {
    documents: names.documents(generation),
    counts: names.counts(generation),
  });
}

/**
 * Full text (GIN on the tsvector), trigram (GIN on name: typos, substrings), the exact readable_id,
 * and recency within each filter for pages without text.
 */
export async function createSearchIndexes(client: PoolClient, documents: string): Promise<void> {
  await client.query(`CREATE INDEX ON ${documents} USING gin (search_vector)`);
  await client.query(`CREATE INDEX ON ${documents} USING gin (name gin_trgm_ops)`);
  await client.query(`CREATE INDEX ON ${documents} (readable_id)`);
  await client.query(`CREATE INDEX ON ${documents} (date_uploaded DESC, brain_id DESC)`);
  for (const column of ['species_id', 'atlas_id', 'category_id', 'uploader_id', 'verified'])
    await client.query(`CREATE INDEX ON ${documents} (${column}, date_uploaded DESC, brain_id DESC)`);
  await client.query(`ANALYZE ${documents}`);
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
}

export async function dropGeneration(
  client: PoolClient,
  names: SearchTableNames,
  generation: number,
): Promise<void> {
  await client.query(`DROP TABLE IF EXISTS ${names.documents(generation)}, ${names.counts(generation)}`);
}
