import { Pool } from 'pg';
import { allProjections } from '#services/projector/projections/allProjections';
import { createPostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import { upcastingEventStore } from '#shared/eventStore/upcastingEventStore';
import { formatDifference } from '#shared/projections/verify/compareReadModels';
import { verifyReadModels } from '#shared/projections/verify/verifyReadModels';

/**
 * Rebuilds every read model from the events of `databaseUrl` into a shadow schema of the empty
 * database `scratchUrl` (as `npm run verify-projections` does in the live database itself) and
 * compares every table row by row with the live one, at the position the live checkpoints stand
 * at. Returns one line per difference (the lines verify-projections prints), plus one per
 * projection that could not be compared; empty when the live read models equal the fresh rebuild,
 * i.e. no event was skipped or applied twice, whatever the live projector went through.
 */
export async function differencesFromFreshRebuild(
  databaseUrl: string,
  scratchUrl: string,
): Promise<string[]> {
  const store = createPostgresEventStore({ connectionString: databaseUrl, poolSize: 2 });
  const live = new Pool({ connectionString: databaseUrl, max: 2 });
  const scratch = new Pool({ connectionString: scratchUrl, max: 3 });
  try {
    const differences: string[] = [];
    const report = await verifyReadModels({
      store: upcastingEventStore(store),
      live,
      shadow: scratch,
      projections: allProjections,
      onDifference: (difference) => differences.push(formatDifference(difference)),
    });
    for (const p of report.projections)
      if (p.position === undefined) differences.push(`skipped: ${p.name} v${p.version}: ${p.note ?? ''}`);
    return differences;
  } finally {
    await store.close();
    await Promise.all([live.end(), scratch.end()]);
  }
}
