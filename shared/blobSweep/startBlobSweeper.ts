import type { Pool } from 'pg';
import type { BlobStore } from '#shared/blobStore/blobStore';
import type { EventStore } from '#shared/eventStore/eventStore';
import type { Logger } from '#shared/logging/logger';
import type { Metrics } from '#shared/metrics/metrics';
import { LeaderLease } from '#shared/projections/leaderLease';
import { abortableSleep } from '#shared/runtime/abortableSleep';
import { startSupervisedLoop, type SupervisedLoop } from '#shared/runtime/supervisedLoop';
import { sweepBlobStore, type BlobSweepReport, type BlobSweepTimings } from './sweepBlobStore';

export const BLOB_SWEEPER_LOOP = 'blob_sweeper';
/** One sweep at a time across every process on the read models' database. */
export const BLOB_SWEEP_LOCK = 'catalogue:blob-sweep';

/** Long enough for a projector to catch up after a restart; a rebuild from zero takes longer and waits for a later sweep. */
export const DEFAULT_CATCH_UP_TIMEOUT_MS = 30_000;

export interface BlobSweeperSettings extends Omit<BlobSweepTimings, 'catchUpTimeoutMs'> {
  /** Between the end of one sweep and the start of the next; the first runs at start. */
  readonly intervalMs: number;
  readonly catchUpTimeoutMs?: number;
}

export interface BlobSweeperDeps {
  readonly blobs: BlobStore;
  readonly pool: Pool;
  readonly store: Pick<EventStore, 'headPosition'>;
  readonly logger: Logger;
  readonly metrics: Pick<Metrics, 'blobsSwept' | 'setLoopUp' | 'loopFailed'>;
  readonly now?: () => Date;
}

/** Undefined when another process held the lock: it sweeps, this one waits for the next round. */
export type SweepOutcome = BlobSweepReport | undefined;

/**
 * One sweep under the lock, its removals counted in the metrics and, when it removed anything,
 * logged in one line.
 */
export async function sweepOnce(
  deps: BlobSweeperDeps,
  settings: BlobSweepTimings,
  signal: AbortSignal,
): Promise<SweepOutcome> {
  const lease = new LeaderLease(deps.pool, BLOB_SWEEP_LOCK);
  const lost = await lease.tryAcquire();
  if (!lost) return undefined;
  const started = Date.now();
  let report: BlobSweepReport;
  try {
    report = await sweepBlobStore(
      { ...deps, now: deps.now ?? (() => new Date()) },
      settings,
      AbortSignal.any([signal, lost]),
    );
  } finally {
    await lease.release();
  }
  const { leftovers, orphans } = report;
  if (leftovers.count > 0) deps.metrics.blobsSwept('leftover', leftovers.count, leftovers.bytes);
  if (orphans.count > 0) deps.metrics.blobsSwept('orphan', orphans.count, orphans.bytes);
  if (leftovers.count + orphans.count > 0)
    deps.logger.info('blob sweep removed leftovers and orphaned blobs', {
      leftovers: leftovers.count,
      leftover_bytes: leftovers.bytes,
      orphans: orphans.count,
      orphan_bytes: orphans.bytes,
      seconds: (Date.now() - started) / 1000,
    });
  if (lost.aborted && !signal.aborted)
    throw new Error('lost the connection holding the blob sweep lock', { cause: lost.reason });
  if (!report.orphansChecked && !signal.aborted)
    deps.logger.info('blob sweep left orphans for the next one: the read models did not catch up in time', {
      waited_seconds: settings.catchUpTimeoutMs / 1000,
    });
  return report;
}

/**
 * Sweeps at start and then every interval (see sweepBlobStore). A failed sweep (the store or the
 * database away) is retried with backoff and fails /health/ meanwhile, as every supervised loop.
 */
export function startBlobSweeper(deps: BlobSweeperDeps, settings: BlobSweeperSettings): SupervisedLoop {
  const timings = { ...settings, catchUpTimeoutMs: settings.catchUpTimeoutMs ?? DEFAULT_CATCH_UP_TIMEOUT_MS };
  return startSupervisedLoop({
    name: BLOB_SWEEPER_LOOP,
    logger: deps.logger,
    metrics: deps.metrics,
    async body({ signal, up }) {
      while (!signal.aborted) {
        await sweepOnce(deps, timings, signal);
        up();
        await abortableSleep(settings.intervalMs, signal);
      }
    },
  });
}
