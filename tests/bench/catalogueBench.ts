import path from 'node:path';
import pg from 'pg';
import { createPostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import { READ_MODEL_SCHEMA } from '#shared/projections/projection';
import { ProjectionRunner } from '#shared/projections/projectionRunner';
import { allProjections } from '#services/projector/projections/allProjections';
import type { BenchPostgres } from './benchPostgres';
import { startBenchService } from './benchService';
import { writeCatalogue } from './catalogueWriter';
import type { Cleanup } from './cleanup';
import { perSecond, type Figure } from './figure';
import { explainBrainList } from './explainList';
import { measureBrainList, type ListPlan } from './listBench';
import { printDetail, printFigure, printSection } from './report';

const REBUILD_TARGET = 10_000;
const REBUILD_BATCH = 2000;

/**
 * The catalogue at scale: `brains` brains written through the EventStore port, every registered
 * read model rebuilt from those events by the real ProjectionRunner (events/s), then the brains
 * list served by the real all-in-one on that database (listBench).
 */
export async function measureCatalogue(
  bench: BenchPostgres,
  cleanup: Cleanup,
  plan: ListPlan & { brains: number },
): Promise<Figure[]> {
  printSection(`catalogue of ${plan.brains.toLocaleString('en-US')} brains, written through the event store`);
  const databaseUrl = await bench.createDatabase('bench_catalogue');
  const rebuild = await writeAndRebuild(databaseUrl, cleanup, plan.brains);
  const service = await startBenchService(databaseUrl, path.join(bench.scratchDir, 'catalogue'));
  const closeService = cleanup.defer('catalogue all-in-one', () => service.close());
  const uncached = await startBenchService(databaseUrl, path.join(bench.scratchDir, 'uncached'), {
    listCache: false,
  });
  const closeUncached = cleanup.defer('uncached all-in-one', () => uncached.close());
  const names = await catalogueNames(databaseUrl);
  const figures = [
    rebuild,
    ...(await measureBrainList({ cached: service.url, uncached: uncached.url, names }, cleanup, plan)),
  ];
  await closeUncached();
  await closeService();
  return figures;
}

async function writeAndRebuild(databaseUrl: string, cleanup: Cleanup, brains: number): Promise<Figure> {
  const store = createPostgresEventStore({ connectionString: databaseUrl, poolSize: 10 });
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  pool.on('error', () => undefined); // an idle connection dropping is not a benchmark failure
  const close = cleanup.defer('catalogue store', async () => {
    await pool.end();
    await store.close();
  });
  await store.migrate();
  const written = await writeCatalogue(store, brains, (done) => progress('written', done, brains));
  process.stderr.write('\n');
  printDetail(
    `wrote ${written.brains} brains as ${written.events} events (users, categories, species, atlases; per brain IdAllocated, UploadReceived, BrainCreated) in ${written.seconds.toFixed(1)} s: ${Math.round(written.events / written.seconds)} events/s`,
  );
  const runner = new ProjectionRunner({ store, pool, projections: allProjections, batchSize: REBUILD_BATCH });
  const started = performance.now();
  const applied = await runner.catchUp((done) => progress('projected', done, written.events));
  const seconds = (performance.now() - started) / 1000;
  process.stderr.write('\n');
  printDetail(
    `rebuilt ${allProjections.map((p) => p.name).join(', ')} from ${applied} events in ${seconds.toFixed(1)} s (batches of ${REBUILD_BATCH})`,
  );
  await vacuumReadModels(pool);
  if (process.env.BENCH_EXPLAIN === '1') await explainBrainList(pool);
  await close();
  const figure: Figure = {
    name: `rebuild of every read model (${allProjections.length} projections)`,
    rounds: [applied / seconds],
    unit: perSecond('events'),
    target: { kind: 'at least', value: REBUILD_TARGET },
  };
  printFigure(figure);
  return figure;
}

/**
 * What autovacuum does within a minute or two of a bulk load (statistics, visibility map), done
 * at once so the measured plans are the steady-state ones and not those of a just-loaded table.
 */
async function vacuumReadModels(pool: pg.Pool): Promise<void> {
  const started = performance.now();
  const { rows } = await pool.query<{ name: string }>(
    `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname = $1`,
    [READ_MODEL_SCHEMA],
  );
  for (const { name } of rows) await pool.query(`VACUUM (ANALYZE) ${name}`);
  printDetail(
    `VACUUM (ANALYZE) of ${rows.length} read-model tables in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}

/** The brains' names by id (the bare in-memory search baseline's index, listBench.ts). */
async function catalogueNames(databaseUrl: string): Promise<(string | undefined)[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: number; name: string }>(
      'SELECT brain_id AS id, name FROM public.brain_search WHERE NOT removed',
    );
    const names: (string | undefined)[] = [];
    for (const { id, name } of rows) names[id] = name;
    return names;
  } finally {
    await client.end();
  }
}

let lastDrawn = 0;
function progress(what: string, done: number, total: number): void {
  const now = performance.now();
  if (now - lastDrawn < 1000 && done < total) return;
  lastDrawn = now;
  process.stderr.write(`\r   ${what} ${done}/${total}`);
}
