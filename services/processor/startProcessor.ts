import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Pool } from 'pg';
import type { BlobStore } from '#shared/blobStore/blobStore';
import type { ProcessorConfig } from '#shared/config/config';
import { type EventStore, type GlobalPosition, comparePositions } from '#shared/eventStore/eventStore';
import type { HealthCheck } from '#shared/http/system/healthChecks';
import type { Logger } from '#shared/logging/logger';
import type { Metrics } from '#shared/metrics/metrics';
import { type Backoff, DEFAULT_BACKOFF } from '#shared/runtime/backoff';
import { loopHealthCheck } from '#shared/platform/loopHealthCheck';
import { type LoopBody, type SupervisedLoop, startSupervisedLoop } from '#shared/runtime/supervisedLoop';
import { FaultReporter } from './faultReporter';
import { startEmbargoTimer } from './embargoTimer';
import type { Inspector } from './inspection';
import { type PendingUpload, PendingUploads, knownStream } from './pendingUploads';
import { FollowerCheckpoint } from '#shared/runtime/followerCheckpoint';
import { type ProcessUploadDeps, processUpload } from './processUpload';
import { Slots } from './slots';

export const PROCESSOR_LOOP = 'upload_processor';

export interface ProcessorDeps {
  readonly store: EventStore;
  /** The read models' database: the processor keeps its checkpoint there. */
  readonly pool: Pool;
  readonly blobs: BlobStore;
  readonly inspector: Inspector;
  readonly config: ProcessorConfig;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly clock?: () => Date;
  /** Names this instance in its claims; default host, pid and a random suffix. */
  readonly processorId?: string;
  readonly backoff?: Partial<Backoff>;
}

export interface RunningProcessor {
  readonly processorId: string;
  readonly loop: SupervisedLoop;
  /** /health/: failing while the processor cannot follow the events. */
  readonly healthCheck: HealthCheck;
  /** Stops following and working; a claim in progress lapses with its lease. */
  stop(): Promise<void>;
}

/** How often the checkpoint is written when it moved. */
const CHECKPOINT_EVERY_MS = 1000;

/**
 * The upload processor: follows the global order from its checkpoint (a supervised loop: outages
 * are retried with backoff and logged once), keeps the set of unfinished uploads the events
 * announce, and works through them in its slots (`concurrency` for any upload, and some for small
 * uploads beside big ones; the uploaders taking turns), each in a worker thread. An upload held
 * by another processor's lease is looked at again when the lease ends, so the uploads of a dead
 * processor are taken back. The checkpoint never passes an unfinished upload, so a restart misses none.
 */
export function startProcessor(deps: ProcessorDeps): RunningProcessor {
  const processor = new Processor(deps);
  const loop = startSupervisedLoop({
    name: PROCESSOR_LOOP,
    body: (body) => processor.follow(body),
    logger: deps.logger,
    metrics: deps.metrics,
    backoff: deps.backoff,
  });
  // Records EmbargoLifted when embargoes end (the history's record; visibility never waits for it).
  const embargoes = startEmbargoTimer({ ...deps, logger: deps.logger.child({ component: 'embargo_timer' }) });
  const processorHealth = loopHealthCheck(() => loop.status());
  return {
    processorId: processor.processorId,
    loop,
    healthCheck: () => embargoes.healthCheck().then(processorHealth),
    async stop() {
      await Promise.all([loop.stop(), embargoes.stop()]);
      await processor.stop();
    },
  };
}

class Processor {
  readonly processorId: string;
  private pending = new PendingUploads({ commit: -1n, prepare: -1n });
  private readonly slots: Slots;
  private readonly jobs = new Set<Promise<void>>();
  private readonly stopping = new AbortController();
  private readonly checkpoint: FollowerCheckpoint;
  private readonly jobDeps: ProcessUploadDeps;
  private wakeTimer: NodeJS.Timeout | undefined;
  private readonly saveTimer: NodeJS.Timeout;
  private saved: GlobalPosition | undefined;
  private migrated = false;

  constructor(private readonly deps: ProcessorDeps) {
    this.processorId = deps.processorId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.slots = new Slots(deps.config);
    this.checkpoint = new FollowerCheckpoint(deps.pool, 'processor_checkpoints', 'upload_processor');
    this.jobDeps = {
      store: deps.store,
      blobs: deps.blobs,
      inspect: async (job, signal) => {
        const outcome = await deps.inspector.inspect(job, signal);
        if (outcome.kind === 'timed_out') deps.metrics.uploadTimedOut();
        return outcome;
      },
      config: deps.config,
      processorId: this.processorId,
      clock: deps.clock ?? (() => new Date()),
      logger: deps.logger,
      faults: new FaultReporter(deps.logger),
      backoff: deps.backoff ? { ...DEFAULT_BACKOFF, ...deps.backoff } : undefined,
      onTakenOver: () => deps.metrics.claimTakenOver(),
    };
    // A failed write is retried at the next tick; until then a restart resumes a little earlier.
    this.saveTimer = setInterval(
      () => void this.saveCheckpoint().catch(() => undefined),
      CHECKPOINT_EVERY_MS,
    );
    this.saveTimer.unref();
  }

  /** The loop body: resumes from the checkpoint and follows the events until stopped or broken. */
  async follow({ signal, up }: LoopBody): Promise<void> {
    if (!this.migrated) {
      await this.checkpoint.migrate();
      this.migrated = true;
    }
    const from = await this.checkpoint.read();
    // The event store may live elsewhere (EventStoreDB): up only once it answers too.
    await this.deps.store.headPosition();
    // Jobs in flight stay in flight; their uploads come back with the events and are skipped while busy.
    this.pending = new PendingUploads(from);
    this.saved = from;
    up();
    for await (const batch of this.deps.store.subscribeToAll({ after: from, signal })) {
      this.pending.observe(batch);
      this.schedule();
    }
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    clearTimeout(this.wakeTimer);
    clearInterval(this.saveTimer);
    await Promise.all(this.jobs);
    await this.deps.inspector.close();
    await this.saveCheckpoint().catch(() => undefined);
  }

  /** Starts due uploads in the free slots, and sets a timer for the next one a free slot could take. */
  private schedule(): void {
    if (this.stopping.signal.aborted) return;
    const now = this.now();
    for (const { upload } of this.slots.fill(this.pending, now)) this.start(upload);
    const { waiting, running } = this.slots.load(this.pending, now);
    this.deps.metrics.setProcessingQueue(waiting, running);
    this.deps.metrics.setOldestWaitingUpload(this.pending.oldestWaitingSeconds(now, this.slots));
    clearTimeout(this.wakeTimer);
    const next = this.slots.nextDue(this.pending);
    if (next !== undefined)
      this.wakeTimer = setTimeout(() => this.schedule(), Math.min(Math.max(next - now, 0) + 50, 60_000));
  }

  private start(upload: PendingUpload): void {
    const { uploadId, blobKey, filename, sizeBytes } = upload;
    const known = knownStream(upload);
    upload.received = undefined; // used once: a later turn finds the stream moved on
    const job = processUpload(
      this.jobDeps,
      { uploadId, blobKey, filename, sizeBytes },
      this.stopping.signal,
      known,
    )
      .then((result) => {
        if (result.kind === 'done') {
          this.pending.forget(uploadId);
          if (result.outcome) this.deps.metrics.uploadProcessed(result.outcome, result.seconds);
        } else if (result.kind === 'held') this.pending.deferUntilLease(uploadId, result.until);
      })
      .catch((error: unknown) => {
        // Unexpected (not a transient fault, not a refusal): look again after a pause.
        this.deps.logger.error('processing an upload failed unexpectedly', { upload_id: uploadId, error });
        this.pending.deferUntilLease(uploadId, this.now() + this.deps.config.leaseSeconds * 1000);
      })
      .finally(() => {
        this.slots.release(uploadId);
        this.jobs.delete(job);
        this.schedule();
      });
    this.jobs.add(job);
  }

  /** Writes the checkpoint when it moved. */
  private async saveCheckpoint(): Promise<void> {
    const position = this.pending.checkpoint();
    if (this.saved && comparePositions(position, this.saved) <= 0) return;
    await this.checkpoint.advance(position);
    this.saved = position;
  }

  private now(): number {
    return this.jobDeps.clock().getTime();
  }
}
