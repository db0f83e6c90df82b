import type { Pool } from 'pg';
import type { EventStore, GlobalPosition, RecordedEvent } from '#shared/eventStore/eventStore';
import { comparePositions } from '#shared/eventStore/eventStore';
import { eventTablesOf } from '#shared/eventStore/postgres/eventsCopy';
import type { Backoff } from '#shared/runtime/backoff';
import type { LoopMetrics, LoopStatus, SupervisedLoop } from '#shared/runtime/supervisedLoop';
import { startSupervisedLoop } from '#shared/runtime/supervisedLoop';
import type { ActiveProjection } from './activeProjections';
import { earliestPosition, livePosition, loadActiveProjections } from './activeProjections';
import { applyBatch } from './applyBatch';
import { catchUpByCopy } from './catchUpByCopy';
import { catchUpInLanes } from './catchUpInLanes';
import { LeaderLease, leadOrStandBy } from './leaderLease';
import type { Logger } from './logger';
import type { Projection } from './projection';
import type { ProjectionProgress } from './projectionProgress';
import { buildReaderIndexes } from './projectionInstaller';
import { swapCaughtUp } from './swapCaughtUp';

export { PROGRESS_CHANNEL } from './applyBatch';
export { LEADER_LOCK } from './leaderLease';

export const PROJECTION_RUNNER_LOOP = 'projection_runner';
/** How often a runner that does not lead checks whether the leader is gone. */
const STANDBY_POLL_MS = 1000;
/**
 * Events per batch of a catch-up by copy: at 200,000 events, 8,000 a batch took about 15 % less CPU
 * (Node and PostgreSQL alike) than 2,000.
 */
export const COPY_BATCH_SIZE = 10_000;
/** Short: after an outage, writers wait for the runner to catch up again. */
const RUNNER_BACKOFF: Partial<Backoff> = { initialMs: 200, maxMs: 2000 };

export interface ProjectionRunnerOptions {
  readonly store: EventStore;
  readonly pool: Pool;
  readonly projections: readonly Projection[];
  readonly progress?: ProjectionProgress;
  readonly batchSize?: number;
  /**
   * Events per batch of a catch-up from the events' bytes (catchUpByCopy), default COPY_BATCH_SIZE:
   * there a batch's own costs (two COPY statements, the checkpoint, a commit) outweigh its rows'
   * below several thousand.
   */
  readonly copyBatchSize?: number;
  readonly logger?: Logger;
  readonly metrics?: LoopMetrics;
  readonly backoff?: Partial<Backoff>;
  /** Observes each committed batch (metrics, benchmarks). */
  readonly onBatch?: (info: {
    events: number;
    position: GlobalPosition;
    lastRecordedAt: string | undefined;
  }) => void;
}

/**
 * Runs every PostgreSQL projection from one subscription, in a supervised loop: a failure (the
 * database restarting, the leader connection killed) is retried with backoff and the runner
 * resumes from the committed checkpoints. Only the runner holding the leader lease works; the
 * others stand by. Batches: applyBatch; version swaps: swapCaughtUp.
 */
export class ProjectionRunner {
  private readonly lease: LeaderLease;
  private loop: SupervisedLoop | undefined;
  private stopWakingOnWait: (() => void) | undefined;

  constructor(private readonly options: ProjectionRunnerOptions) {
    this.lease = new LeaderLease(options.pool);
  }

  start(): void {
    if (this.loop) return;
    this.loop = startSupervisedLoop({
      name: PROJECTION_RUNNER_LOOP,
      body: (loop) =>
        leadOrStandBy(this.lease, loop, (signal, up) => this.follow(signal, up), STANDBY_POLL_MS),
      logger: this.options.logger,
      metrics: this.options.metrics,
      backoff: { ...RUNNER_BACKOFF, ...this.options.backoff },
    });
    // A writer waiting on the read side means the database answers again: retry now, not after the backoff.
    this.stopWakingOnWait = this.options.progress?.onWait(() => this.loop?.wake());
  }

  /** Stops following and gives up the leader lock (another runner may lead at once). */
  async stop(): Promise<void> {
    this.stopWakingOnWait?.();
    await this.loop?.stop();
    await this.lease.release();
  }

  /** For /health/: up while leading or standing by, retrying during an outage. */
  status(): LoopStatus & { readonly leading: boolean } {
    const status = this.loop?.status() ?? { state: 'stopped', attempts: 0, lastError: undefined, since: 0 };
    return { ...status, leading: this.lease.isHeld };
  }

  /**
   * Installs tables and checkpoints, then applies everything up to the current head; returns events
   * applied. The events are read once and every projection applies them on its own connection,
   * all at once (catchUpInLanes), each batch in a transaction with its own checkpoint: the read
   * models are independent, so a rebuild takes as long as the slowest one, not their sum. On the
   * PostgreSQL store read without upcasting, a projection that offers it catches up from the
   * events' bytes instead, in a lane of its own that reads them itself (catchUpByCopy).
   */
  async catchUp(onProgress?: (applied: number, position: GlobalPosition) => void): Promise<number> {
    // Tables created now are filled from the events: their reader indexes are built at the end.
    const active = await this.load({ deferReaderIndexes: true });
    // Everything committed before this call, held back from readAll for a moment or not.
    const store = this.options.store;
    const head = await (store.newestPosition ? store.newestPosition() : store.headPosition());
    const batchSize = this.options.batchSize ?? 1000;
    const tables = eventTablesOf(store);
    const byCopy = tables ? active.filter((a) => a.projection.beginCopyCatchUp !== undefined) : [];
    const inLanes = active.filter((a) => !byCopy.includes(a));
    // A lane that is done builds its live projection's indexes while the others still apply.
    const finish = async (a: ActiveProjection | undefined): Promise<void> => {
      if (a?.status === 'live') await buildReaderIndexes(this.options.pool, a.projection);
    };
    // What every lane has reached, reported as the least of them.
    const reached = new Map<object, { applied: number; position: GlobalPosition }>();
    const lanes = byCopy.length + (inLanes.length > 0 ? 1 : 0);
    let reported = 0;
    const report = (lane: object, applied: number, position: GlobalPosition): void => {
      reached.set(lane, { applied, position });
      if (reached.size < lanes) return;
      const least = [...reached.values()].reduce((a, b) => (b.applied < a.applied ? b : a));
      if (least.applied <= reported) return;
      this.options.onBatch?.({
        events: least.applied - reported,
        position: least.position,
        lastRecordedAt: undefined,
      });
      reported = least.applied;
      onProgress?.(least.applied, least.position);
    };
    let failure: { error: unknown } | undefined;
    const watch = <T>(lane: Promise<T>): Promise<T> =>
      lane.catch((error: unknown) => {
        failure ??= { error };
        throw error;
      });
    const outcomes = await Promise.allSettled([
      ...byCopy.map((a) =>
        watch(
          catchUpByCopy({
            pool: this.options.pool,
            active: a,
            tables: tables!,
            head,
            batchSize: this.options.copyBatchSize ?? COPY_BATCH_SIZE,
            stopped: () => failure !== undefined,
            onBatch: (applied, position) => {
              const live = livePosition(active);
              if (live) this.options.progress?.advance(live, []);
              report(a, applied, position);
            },
          }).then(async (applied) => {
            if (!failure) await finish(a);
            return applied;
          }),
        ),
      ),
      ...(inLanes.length === 0
        ? []
        : [
            watch(
              catchUpInLanes({
                lanes: inLanes.map((a) => [a]),
                start: earliestPosition(inLanes),
                read: (after) => {
                  if (failure) throw failure.error; // a lane by copy failed: stop these too
                  return this.readTowards(head, after, batchSize);
                },
                apply: async (lane, batch) => {
                  const { changed } = await applyBatch(this.options.pool, lane, batch);
                  // What readers may rely on is still the least position of all live projections.
                  const live = livePosition(active);
                  if (live) this.options.progress?.advance(live, changed);
                },
                finish: ([a]) => finish(a),
                onProgress: (applied, position) => report(inLanes, applied, position),
              }),
            ),
          ]),
    ]);
    if (failure) throw failure.error;
    return Math.max(0, ...outcomes.map((o) => (o.status === 'fulfilled' ? o.value : 0)));
  }

  /**
   * The next batch up to `head`, empty once there. Every event up to the head is committed, but
   * readAll returns only what no transaction still open on the server can precede (m0003), so while
   * an older transaction is open anywhere (another database's included: transaction ids are the
   * server's) the rest is held back for a moment: wait for it rather than end short of the head.
   */
  private async readTowards(
    head: GlobalPosition,
    after: GlobalPosition,
    batchSize: number,
  ): Promise<RecordedEvent[]> {
    for (let waitMs = 5; comparePositions(after, head) < 0; waitMs = Math.min(waitMs * 2, 200)) {
      const batch = await this.options.store.readAll({ after, maxCount: batchSize });
      if (batch.length > 0) return batch;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
    return [];
  }

  /** Catch-up then live, from the checkpoints; ends when the signal aborts, throws on any failure. */
  private async follow(signal: AbortSignal, up: () => void): Promise<void> {
    const active = await this.load();
    // A catch-up that stopped half-way (a failed rebuild) left a live version without them.
    for (const a of active)
      if (a.status === 'live') await buildReaderIndexes(this.options.pool, a.projection);
    up();
    await this.swapIfCaughtUp(active);
    const batchSize = this.options.batchSize ?? 500;
    for await (const batch of this.options.store.subscribeToAll({
      after: earliestPosition(active),
      batchSize,
      signal,
    })) {
      if (batch.length > 0) await this.apply(active, batch);
      await this.swapIfCaughtUp(active);
    }
  }

  private async load(options: { deferReaderIndexes?: boolean } = {}): Promise<ActiveProjection[]> {
    const active = await loadActiveProjections(this.options.pool, this.options.projections, options);
    // Readers waiting for a position applied before a restart need not wait for the next batch.
    const live = livePosition(active);
    if (live) this.options.progress?.advance(live);
    return active;
  }

  private async apply(active: ActiveProjection[], batch: readonly RecordedEvent[]): Promise<void> {
    const { end, changed } = await applyBatch(this.options.pool, active, batch);
    const live = livePosition(active);
    if (live) this.options.progress?.advance(live, changed);
    this.options.onBatch?.({
      events: batch.length,
      position: end,
      lastRecordedAt: batch[batch.length - 1]?.metadata.recordedAt,
    });
  }

  private async swapIfCaughtUp(active: ActiveProjection[]): Promise<void> {
    if (!(await swapCaughtUp(this.options.pool, this.options.store, active, this.options.logger))) return;
    // Readers waiting for a position the new version has already applied must not wait for the next
    // batch; rows cached from the old version are all stale.
    const live = livePosition(active);
    if (live) this.options.progress?.advance(live, ['*']);
  }
}
