import { startBenchPostgres } from './benchPostgres';
import { measureAppends } from './appendBench';
import { Cleanup } from './cleanup';
import type { Figure } from './figure';
import { measureMeEndpoint } from './httpBench';
import { measureProjectionLag } from './lagFigures';
import { measureNiftiMetadata } from './formatBench';
import { printMachine, printSummary } from './report';

/** BENCH_ONLY=<comma list> of sections (append, lag, http, formats) runs only those. */
const only = process.env.BENCH_ONLY?.split(',').map((name) => name.trim());
const runs = (section: string): boolean => !only || only.includes(section);

/**
 * `npm run bench`: throughput and latency figures of the event store, the projector and the HTTP
 * stack, each with the median and range over several rounds (the machine is noisy) and its target.
 * A missed target is reported, not fatal: the exit code is non-zero only when something failed.
 */
async function main(cleanup: Cleanup): Promise<void> {
  const started = Date.now();
  const pg = ['append', 'lag', 'http'].some(runs) ? await startBenchPostgres(cleanup) : undefined;
  printMachine(pg?.version ?? 'PostgreSQL not started');
  const figures: Figure[] = [
    ...(pg && runs('append') ? await measureAppends(pg, cleanup, { rounds: 5, roundMs: 2000 }) : []),
    ...(pg && runs('lag')
      ? await measureProjectionLag(pg, cleanup, { rounds: 3, roundMs: 10_000, rate: 200 })
      : []),
    ...(pg && runs('http')
      ? await measureMeEndpoint(pg, cleanup, {
          rounds: 3,
          connections: 10,
          durationSeconds: 5,
          warmUpSeconds: 2,
        })
      : []),
    ...(runs('formats') ? await measureNiftiMetadata(cleanup, { rounds: 5 }) : []),
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
