import type { PoolClient } from 'pg';
import { companionFunction } from '#shared/infra/postgres/companionFunctions';

/**
 * The triggers that keep a generation's counts, words and lexemes exact as its documents change:
 * statement-level, reading the statement's transition tables, one function per kept table with
 * that table's name written into its statements.
 *
 * The functions are made per table, not shared with the table as an argument (the first
 * generations' ./migrations/*.sql, still called by the tables made before): a shared function has
 * to build each statement as text and EXECUTE it, which parses and plans it on every call, while a
 * function's own statements are prepared once per connection. Measured on a single-row INSERT of a
 * document (EXPLAIN ANALYZE, warm, 6 runs each): the three triggers took 0.8-1.4 ms with EXECUTE and
 * 0.15-0.3 ms with their own statements; an upsert fires the INSERT and the UPDATE triggers both.
 *
 * Each function is the documents table's companion (`<documents>__counts`, companionFunctions.ts):
 * dropTableAndCompanions drops them with it, and dropping the schema drops them too.
 */

type TriggerOp = 'insert' | 'update' | 'delete';
type KeptTable = 'counts' | 'words' | 'lexemes';

/** The transition tables a trigger of each operation sees (the functions read them by these names). */
const TRANSITION_TABLES: Readonly<Record<TriggerOp, string>> = {
  insert: 'NEW TABLE AS new_rows',
  update: 'OLD TABLE AS old_rows NEW TABLE AS new_rows',
  delete: 'OLD TABLE AS old_rows',
};

/** The rows an operation removes (counted -1) and adds (+1), as transition tables. */
const SIDES: Readonly<Record<TriggerOp, readonly (readonly [string, 1 | -1])[]>> = {
  insert: [['new_rows', 1]],
  update: [
    ['old_rows', -1],
    ['new_rows', 1],
  ],
  delete: [['old_rows', -1]],
};

/**
 * The statement adding one operation's deltas to a dictionary (`column`: its key, `values`: the
 * values of a transition-table row `r` it counts), collecting the keys whose count fell to zero.
 */
function dictionaryDeltas(table: string, column: string, values: string, op: TriggerOp): string {
  const deltas = SIDES[op]
    .map(
      ([rows, sign]) =>
        `SELECT v, ${sign} AS delta FROM ${rows} r CROSS JOIN unnest(${values}) AS v WHERE NOT r.removed AND v <> ''`,
    )
    .join(' UNION ALL ');
  return `WITH changed AS (
        INSERT INTO ${table} AS t (${column}, n)
        SELECT v, sum(delta) FROM (${deltas}) d
        GROUP BY v HAVING sum(delta) <> 0 ORDER BY v
        ON CONFLICT (${column}) DO UPDATE SET n = t.n + EXCLUDED.n
        RETURNING t.${column}, t.n)
      SELECT coalesce(array_agg(${column}), '{}') INTO unused FROM changed WHERE n = 0;`;
}

/** A dictionary's function: words of the names, or lexemes of the search vectors. */
function dictionaryFunction(table: string, column: string, values: string): string {
  return `DECLARE
  unused text[];
BEGIN
  IF TG_OP = 'INSERT' THEN
    ${dictionaryDeltas(table, column, values, 'insert')}
  ELSIF TG_OP = 'UPDATE' THEN
    ${dictionaryDeltas(table, column, values, 'update')}
  ELSE
    ${dictionaryDeltas(table, column, values, 'delete')}
  END IF;
  IF cardinality(unused) > 0 THEN
    DELETE FROM ${table} WHERE ${column} = ANY (unused) AND n = 0;
  END IF;
  RETURN NULL;
END`;
}

/**
 * The counts' function: public documents per placement. A placement nothing has any more leaves no
 * row, so the counts are the same whatever batches built them (a rebuild compares equal row for
 * row); those rows are locked in key order, like the upsert, by ctid, since a NULL (no atlas) never
 * equals itself.
 */
function countsFunction(table: string, placement: string): string {
  const deltas = (op: TriggerOp) =>
    SIDES[op]
      .map(
        ([rows, sign]) =>
          `SELECT ${placement}, ${sign} AS delta FROM ${rows} WHERE NOT removed AND visibility = 'public'`,
      )
      .join(' UNION ALL ');
  const upsert = (op: TriggerOp) => `INSERT INTO ${table} AS c (${placement}, n)
      SELECT ${placement}, sum(delta) FROM (${deltas(op)}) d
      GROUP BY ${placement} HAVING sum(delta) <> 0
      ORDER BY ${placement}
      ON CONFLICT (${placement}) DO UPDATE SET n = c.n + EXCLUDED.n;`;
  return `BEGIN
  IF TG_OP = 'INSERT' THEN
    ${upsert('insert')}
  ELSIF TG_OP = 'UPDATE' THEN
    ${upsert('update')}
  ELSE
    ${upsert('delete')}
  END IF;
  DELETE FROM ${table} WHERE n = 0 AND ctid = ANY (ARRAY(
    SELECT ctid FROM ${table} WHERE n = 0 ORDER BY ${placement} FOR UPDATE));
  RETURN NULL;
END`;
}

/**
 * One generation's physical tables: the documents and what triggers keep from them, their counts,
 * their names' words and their full-text lexemes (searchTables.ts names and makes them).
 */
export interface SearchTables {
  readonly documents: string;
  readonly counts: string;
  readonly words: string;
  readonly lexemes: string;
}

/**
 * Creates the three functions of `tables` and the statement-level triggers of its documents
 * (`<kind>_<op>`) that call them. `placement`: the counts' key columns, comma-separated.
 */
export async function createKeptTableTriggers(
  client: PoolClient,
  tables: SearchTables,
  placement: string,
): Promise<void> {
  const bodies: Readonly<Record<KeptTable, string>> = {
    counts: countsFunction(tables.counts, placement),
    words: dictionaryFunction(tables.words, 'word', 'r.name_words'),
    lexemes: dictionaryFunction(tables.lexemes, 'lexeme', 'tsvector_to_array(r.search_vector)'),
  };
  for (const [kind, body] of Object.entries(bodies) as [KeptTable, string][]) {
    const fn = companionFunction(tables.documents, kind);
    await client.query(
      `CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $function$\n${body}\n$function$`,
    );
    const prefix = kind === 'counts' ? 'count' : kind;
    for (const [op, referencing] of Object.entries(TRANSITION_TABLES) as [TriggerOp, string][])
      await client.query(
        `CREATE TRIGGER "${prefix}_${op}" AFTER ${op.toUpperCase()} ON ${tables.documents}
         REFERENCING ${referencing} FOR EACH STATEMENT EXECUTE FUNCTION ${fn}()`,
      );
  }
}
