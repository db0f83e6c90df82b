import type { PoolClient } from 'pg';

/**
 * Functions that belong to a table (its triggers' functions, made for it) are named
 * `<table>__<suffix>` in the table's schema, so that whoever drops the table drops them too:
 * DROP TABLE leaves functions behind (they do not depend on it), DROP SCHEMA does not.
 */

const QUALIFIED = /^"([a-z_][a-z0-9_]*)"\."([a-z_][a-z0-9_]*)"$/;

function parts(qualified: string): { schema: string; table: string } {
  const match = QUALIFIED.exec(qualified);
  if (!match) throw new Error(`not a quoted schema-qualified table: ${qualified}`);
  return { schema: match[1]!, table: match[2]! };
}

/** The name of `table`'s ("schema"."table") companion function `suffix`. */
export function companionFunction(table: string, suffix: string): string {
  if (!/^[a-z][a-z0-9_]*$/.test(suffix)) throw new Error(`invalid function suffix: ${suffix}`);
  const { schema, table: name } = parts(table);
  return `"${schema}"."${name}__${suffix}"`;
}

/** Drops `table` ("schema"."table"), if it exists, and its companion functions. */
export async function dropTableAndCompanions(client: PoolClient, table: string): Promise<void> {
  const { schema, table: name } = parts(table);
  await client.query(`DROP TABLE IF EXISTS ${table}`);
  const { rows } = await client.query<{ fn: string }>(
    `SELECT p.oid::regprocedure::text AS fn
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = $1 AND starts_with(p.proname, $2)`,
    [schema, `${name}__`],
  );
  for (const { fn } of rows) await client.query(`DROP FUNCTION IF EXISTS ${fn}`);
}
