import { startBenchPostgres } from './benchPostgres';
import { measureAppends } from './appendBench';
import { measureAudit } from './auditBench';
import { measureCatalogue } from './catalogueBench';
import { measureCreates } from './createBench';
import { Cleanup } from './cleanup';
import type { Figure } from './figure';
import { measureMeEndpoint } from './httpBench';
import { measureProjectionLag } from './lagFigures';
import { measureNiftiMetadata } from './formatBench';
import { importBenchOptions, measureImport } from './importBench';
import { measureApiWhileProcessing } from './processorBench';
import { printLoad, printMachine, printSummary } from './report';
import { measureUploads, uploadBenchOptions } from './uploadBench';
import { measureTusUploads, tusBenchOptions } from './tusUploadBench';
import { measureVisibility } from './visibilityBench';
import { measureWebCatalogue, webSearchOptions } from './webSearchBench';

/**
 * `npm run bench`: throughput and latency figures of the event store, the projector and the HTTP
 * stack, each with the median and range over several rounds (the machine is noisy) and its target.
 * A missed target is reported, not fatal: the exit code is non-zero only when something failed.
 */
async function main(cleanup: Cleanup): Promise<void> {
  const started = Date.now();
  const pg = await startBenchPostgres(cleanup);
  printMachine(pg.version);
  const http = { rounds: 3, connections: 10, durationSeconds: 5, warmUpSeconds: 2 };
  const sections: Record<string, () => Promise<Figure[]>> = {
    appends: () => measureAppends(pg, cleanup, { rounds: 5, roundMs: 2000 }),
    lag: () => measureProjectionLag(pg, cleanup, { rounds: 3, roundMs: 10_000, rate: 1000 }),
    http: () => measureMeEndpoint(pg, cleanup, http),
    catalogue: () =>
      measureCatalogue(pg, cleanup, { ...http, brains: positiveInteger('BENCH_BRAINS', 100_000) }),
    audit: () =>
      measureAudit(pg, cleanup, {
        events: positiveInteger('BENCH_AUDIT_EVENTS', 1_000_000),
        rounds: 3,
        connections: 4,
        durationSeconds: 5,
      }),
    processor: () =>
      measureApiWhileProcessing(pg, cleanup, {
        rounds: 3,
        connections: 10,
        durationSeconds: 8,
        volumeEdge: 128,
      }),
    upload: () => measureUploads(pg, cleanup, uploadBenchOptions(process.env)),
    tus: () => measureTusUploads(pg, cleanup, tusBenchOptions(process.env)),
    visibility: () =>
      measureVisibility(pg, cleanup, {
        brains: positiveInteger('BENCH_BRAINS', 100_000),
        rounds: 5,
        connections: 10,
        durationSeconds: 3,
      }),
    formats: () => measureNiftiMetadata(cleanup, { rounds: 5 }),
    creates: () => measureCreates(pg, cleanup, { rounds: 3, connections: 8, durationSeconds: 8 }),
    import: () => measureImport(pg, cleanup, importBenchOptions(process.env)),
    web: () => measureWebCatalogue(pg, cleanup, webSearchOptions(process.env)),
  };
  const figures: Figure[] = [];
  for (const name of selectedSections(Object.keys(sections))) figures.push(...(await sections[name]!()));
  printSummary(figures);
  printLoad('at the end');
  process.stdout.write(`\nfinished in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}

/** BENCH_ONLY=<comma list> runs only those sections (in their usual order); unset, all of them. */
function selectedSections(all: readonly string[]): string[] {
  const only = process.env.BENCH_ONLY?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!only?.length) return [...all];
  const unknown = only.filter((s) => !all.includes(s));
  if (unknown.length > 0)
    throw new Error(`BENCH_ONLY: no section ${unknown.join(', ')} (sections: ${all.join(', ')})`);
  return all.filter((s) => only.includes(s));
}

function positiveInteger(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  if (!/^[1-9][0-9]*$/.test(text)) throw new Error(`${name} must be a positive integer, not ${text}`);
  return Number(text);
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
