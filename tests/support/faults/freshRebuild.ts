import { Client, Pool } from 'pg';
import { allProjections } from '#services/projector/projections/allProjections';
import { createPostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import { upcastingEventStore } from '#shared/eventStore/upcastingEventStore';
import { ProjectionRunner } from '#shared/projections/projectionRunner';

const SHOWN_ROWS = 5;

/**
 * Rebuilds every read model from the events of `databaseUrl` into the empty database `scratchUrl`
 * (as `npm run rebuild` would, but beside the live one) and compares every table row by row.
 * Returns one line per difference; empty when the live read models equal the fresh rebuild, i.e.
 * no event was skipped or applied twice, whatever the live projector went through.
 */
export async function differencesFromFreshRebuild(
  databaseUrl: string,
  scratchUrl: string,
): Promise<string[]> {
  const store = createPostgresEventStore({ connectionString: databaseUrl, poolSize: 2 });
  const scratch = new Pool({ connectionString: scratchUrl, max: 2 });
  try {
    const runner = new ProjectionRunner({
      store: upcastingEventStore(store),
      pool: scratch,
      projections: allProjections,
    });
    await runner.catchUp();
    return await compareTables(databaseUrl, scratchUrl);
  } finally {
    await store.close();
    await scratch.end();
  }
}

async function compareTables(liveUrl: string, rebuiltUrl: string): Promise<string[]> {
  const live = new Client({ connectionString: liveUrl });
  const rebuilt = new Client({ connectionString: rebuiltUrl });
  await Promise.all([live.connect(), rebuilt.connect()]);
  try {
    const differences: string[] = [];
    for (const table of allProjections.flatMap((p) => p.tables)) {
      const [liveRows, rebuiltRows] = await Promise.all([rowsOf(live, table), rowsOf(rebuilt, table)]);
      differences.push(...diff(table, liveRows, rebuiltRows));
    }
    return differences;
  } finally {
    await Promise.all([live.end(), rebuilt.end()]);
  }
}

/** Each row as JSON text, sorted: two tables are equal when these lists are. */
async function rowsOf(db: Client, table: string): Promise<string[]> {
  const { rows } = await db.query<{ row: string }>(
    `SELECT row_to_json(t)::text AS row FROM public.${db.escapeIdentifier(table)} t ORDER BY 1`,
  );
  return rows.map((r) => r.row);
}

function diff(table: string, live: readonly string[], rebuilt: readonly string[]): string[] {
  const rebuiltSet = new Set(rebuilt);
  const liveSet = new Set(live);
  const onlyLive = live.filter((row) => !rebuiltSet.has(row));
  const onlyRebuilt = rebuilt.filter((row) => !liveSet.has(row));
  if (onlyLive.length === 0 && onlyRebuilt.length === 0 && live.length === rebuilt.length) return [];
  return [
    `${table}: ${live.length} live rows, ${rebuilt.length} rebuilt; ${onlyLive.length} only live, ${onlyRebuilt.length} only rebuilt`,
    ...onlyLive.slice(0, SHOWN_ROWS).map((row) => `${table} only live: ${row}`),
    ...onlyRebuilt.slice(0, SHOWN_ROWS).map((row) => `${table} only rebuilt: ${row}`),
  ];
}
