/**
 * How fast verify-projections runs (not part of the test suite):
 *   npx tsx tests/audit/verifyProjectionsSpeed.ts [brains]   (default 30000; 3 events per brain)
 * Writes a generated catalogue (the benchmark's: reference data, then per brain its id allocation,
 * upload record and BrainCreated) into a throw-away embedded PostgreSQL, builds the live read
 * models with the projection runner, then times verifyReadModels over them, as the script runs it.
 */
import pg from 'pg';
import { allProjections } from '#services/projector/projections/allProjections';
import { createPostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import { upcastingEventStore } from '#shared/eventStore/upcastingEventStore';
import { ProjectionRunner } from '#shared/projections/projectionRunner';
import { formatDifference } from '#shared/projections/verify/compareReadModels';
import { verifyReadModels } from '#shared/projections/verify/verifyReadModels';
import { startBenchPostgres } from '#tests/bench/benchPostgres';
import { writeCatalogue } from '#tests/bench/catalogueWriter';
import { Cleanup } from '#tests/bench/cleanup';

async function main(): Promise<void> {
  const brains = Number(process.argv[2] ?? 30_000);
  const cleanup = new Cleanup();
  try {
    const server = await startBenchPostgres(cleanup);
    const url = await server.createDatabase('verify');
    const store = createPostgresEventStore({ connectionString: url });
    cleanup.defer('store', () => store.close());
    const pool = new pg.Pool({ connectionString: url, max: 6 });
    pool.on('error', () => undefined); // the server stops first at the end
    cleanup.defer('pool', () => pool.end());
    await store.migrate();
    const written = await writeCatalogue(upcastingEventStore(store), brains, () => undefined);
    console.log(`wrote ${written.events} events (${brains} brains) in ${written.seconds.toFixed(1)} s`);
    let started = performance.now();
    const applied = await new ProjectionRunner({
      store: upcastingEventStore(store),
      pool,
      projections: allProjections,
      batchSize: 2000,
    }).catchUp();
    const projected = (performance.now() - started) / 1000;
    console.log(`projected ${applied} events in ${projected.toFixed(1)} s: ${Math.round(applied / projected)} events/s`);
    started = performance.now();
    const report = await verifyReadModels({
      store: upcastingEventStore(store),
      live: pool,
      projections: allProjections,
      onDifference: (d) => console.log(formatDifference(d)),
    });
    const total = (performance.now() - started) / 1000;
    console.log(
      `verified ${report.events} events, ${report.tables} tables, ${report.liveRows} live rows, ${report.differences} differences: ` +
        `rebuilt in ${report.buildSeconds.toFixed(1)} s (${Math.round(report.events / report.buildSeconds)} events/s), ` +
        `compared in ${report.compareSeconds.toFixed(1)} s (${Math.round(report.liveRows / report.compareSeconds)} rows/s), ` +
        `${total.toFixed(1)} s in all; RSS ${Math.round(process.memoryUsage().rss / 1e6)} MB`,
    );
  } finally {
    await cleanup.run();
  }
}

void main();
