import type { Pool } from 'pg';
import { loadConfig } from '#shared/config/config';
import { createLogger } from '#shared/logging/logger';
import { openInfrastructure } from '#shared/platform/openInfrastructure';
import { ProjectionRunner } from '#shared/projections/projectionRunner';
import { LeaderLease } from '#shared/projections/leaderLease';
import { dropAllReadModels } from '#shared/projections/projectionInstaller';
import { openSearchBackend } from '#shared/search/searchBackend';
import { allProjections, projectionsWithSearchMirror } from './projections/allProjections';

/**
 * `npm run rebuild`: drops every read model and rebuilds it from the events, showing a progress bar
 * and the rate at the end. Holds the projector's leader lock meanwhile, so it waits for a running
 * projector (stop the service first) and no projector can start half-way. With
 * SEARCH_BACKEND=elasticsearch the search documents go to a new index, swapped in at the end.
 */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = createLogger({ service: 'rebuild', level: config.logLevel === 'debug' ? 'debug' : 'warn' });
  const infra = await openInfrastructure(config, logger);
  const lease = new LeaderLease(infra.readModels);
  const search = await openSearchBackend(config, infra.readModels);
  try {
    let waited = false;
    while (!(await lease.tryAcquire())) {
      if (!waited) process.stderr.write('waiting for the running projector to stop (stop the service)...\n');
      waited = true;
      await new Promise((r) => setTimeout(r, 1000));
    }
    const total = await countEvents(infra.readModels);
    await dropAllReadModels(infra.readModels, allProjections);
    const searchRebuild = await search.beginRebuild?.();
    const runner = new ProjectionRunner({
      store: infra.store,
      pool: infra.readModels,
      projections: projectionsWithSearchMirror(searchRebuild),
      batchSize: 2000,
      logger,
    });
    const started = process.hrtime.bigint();
    const applied = await runner
      .catchUp((done) => drawBar(done, total))
      .catch(async (error: unknown) => {
        await searchRebuild?.abandon();
        throw error;
      });
    await searchRebuild?.finish();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    drawBar(applied, total);
    process.stderr.write('\n');
    const rate = seconds > 0 ? Math.round(applied / seconds) : applied;
    process.stdout.write(
      `rebuilt ${allProjections.length} read model(s) from ${applied} events in ${seconds.toFixed(2)} s: ${rate.toLocaleString('en-US')} events/s\n`,
    );
  } finally {
    await lease.release();
    await search.close();
    await infra.close();
  }
}

/** Events in the PostgreSQL store (for the bar's 100 %); undefined on EventStoreDB. */
async function countEvents(pool: Pool): Promise<number | undefined> {
  try {
    const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM event_store.events');
    return Number(rows[0]?.n ?? 0);
  } catch {
    return undefined;
  }
}

function drawBar(done: number, total: number | undefined): void {
  const width = 40;
  if (!total) return void process.stderr.write(`\r${done} events`);
  const share = Math.min(1, done / total);
  const filled = Math.round(share * width);
  process.stderr.write(
    `\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(share * 100).toFixed(0).padStart(3)}% ${done}/${total} events`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`rebuild failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
