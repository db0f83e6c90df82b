import { startBenchPostgres } from './benchPostgres';
import { measureAppends } from './appendBench';
import { Cleanup } from './cleanup';
import type { Figure } from './figure';
import { measureMeEndpoint } from './httpBench';
import { measureProjectionLag } from './lagFigures';
import { measureApiWhileProcessing } from './processorBench';
import { printMachine, printSummary } from './report';
import { measureUploads, uploadBenchOptions } from './uploadBench';

/** BENCH_ONLY=appends,lag,http,processor,upload,… runs only those sections; unset runs all. */
const only = new Set((process.env.BENCH_ONLY ?? '').split(',').filter(Boolean));
const section = (name: string, measure: () => Promise<Figure[]>): Promise<Figure[]> =>
  only.size === 0 || only.has(name) ? measure() : Promise.resolve([]);

/**
 * `npm run bench`: throughput and latency figures of the event store, the projector and the HTTP
 * stack, each with the median and range over several rounds (the machine is noisy) and its target.
 * A missed target is reported, not fatal: the exit code is non-zero only when something failed.
 */
async function main(cleanup: Cleanup): Promise<void> {
  const started = Date.now();
  const pg = await startBenchPostgres(cleanup);
  printMachine(pg.version);
  const figures: Figure[] = [
    ...(await section('appends', () => measureAppends(pg, cleanup, { rounds: 5, roundMs: 2000 }))),
    ...(await section('lag', () =>
      measureProjectionLag(pg, cleanup, { rounds: 3, roundMs: 10_000, rate: 200 }),
    )),
    ...(await section('http', () =>
      measureMeEndpoint(pg, cleanup, { rounds: 3, connections: 10, durationSeconds: 5, warmUpSeconds: 2 }),
    )),
    ...(await section('processor', () =>
      measureApiWhileProcessing(pg, cleanup, {
        rounds: 3,
        connections: 10,
        durationSeconds: 8,
        volumeEdge: 128,
      }),
    )),
    ...(await section('upload', () => measureUploads(pg, cleanup, uploadBenchOptions(process.env)))),
  ];
  printSummary(figures);
  process.stdout.write(`\nfinished in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}

const cleanup = new Cleanup();
cleanup.onSignals();
main(cleanup)
  .catch((error: unknown) => {
    if (cleanup.interrupted) return;
    process.stderr.write(
      `benchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  })
  .finally(() => cleanup.run())
  .catch(() => undefined);
