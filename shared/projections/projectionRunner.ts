import type { Pool, PoolClient } from 'pg';
import { inTransaction } from '../infra/postgres/inTransaction';
import type { EventStore, GlobalPosition, RecordedEvent } from '../eventStore/eventStore';
import { comparePositions, formatPosition, minPosition } from '../eventStore/eventStore';
import type { Logger } from './logger';
import type { Projection } from './projection';
import { contextFor } from './projection';
import type { CheckpointRow } from './checkpointStore';
import { advanceCheckpoint, migrateCheckpoints, readCheckpoints } from './checkpointStore';
import { installProjection, swapIn } from './projectionInstaller';
import type { ProjectionProgress } from './projectionProgress';

export const PROGRESS_CHANNEL = 'projection_progress';
export const LEADER_LOCK = 'catalogue:projector:leader';

export interface ProjectionRunnerOptions {
  readonly store: EventStore;
  readonly pool: Pool;
  readonly projections: readonly Projection[];
  readonly progress?: ProjectionProgress;
  readonly batchSize?: number;
  readonly logger?: Logger;
  /** Observes each committed batch (metrics, benchmarks). */
  readonly onBatch?: (info: {
    events: number;
    position: GlobalPosition;
    lastRecordedAt: string | undefined;
  }) => void;
}

interface Active {
  readonly projection: Projection;
  status: CheckpointRow['status'];
  position: GlobalPosition;
}

/**
 * Runs every PostgreSQL projection from one subscription. Each batch is applied in ONE transaction
 * that also advances each projection's checkpoint (guarded, so a second runner can never apply the
 * same events twice). A projection whose version changed is rebuilt beside the live one and swapped
 * in when it has caught up, so reads never go down. Only the runner holding the leader lock works.
 */
export class ProjectionRunner {
  private readonly abort = new AbortController();
  private leader: PoolClient | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly options: ProjectionRunnerOptions) {}

  start(): void {
    this.running = this.loop().catch((error: unknown) => {
      if (!this.abort.signal.aborted)
        this.options.logger?.error('projection runner stopped', { error: String(error) });
    });
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
    this.leader?.release();
    this.leader = undefined;
  }

  /** Installs tables and checkpoints, then applies everything up to the current head; returns events applied. */
  async catchUp(onProgress?: (applied: number, position: GlobalPosition) => void): Promise<number> {
    const active = await this.prepare();
    const head = await this.options.store.headPosition();
    let applied = 0;
    let from = earliest(active);
    while (comparePositions(from, head) < 0) {
      const batch = await this.options.store.readAll({
        after: from,
        maxCount: this.options.batchSize ?? 1000,
      });
      if (batch.length === 0) break;
      await this.applyBatch(active, batch);
      applied += batch.length;
      from = batch[batch.length - 1]!.position;
      onProgress?.(applied, from);
    }
    return applied;
  }

  private async loop(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      if (await this.becomeLeader()) {
        try {
          await this.follow(signal);
        } catch (error) {
          if (signal.aborted) return;
          this.options.logger?.error('projection batch failed; retrying', { error: String(error) });
        }
        this.leader?.release(true);
        this.leader = undefined;
      }
      await sleep(1000, signal);
    }
  }

  private async becomeLeader(): Promise<boolean> {
    const client = await this.options.pool.connect();
    const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [
      LEADER_LOCK,
    ]);
    if (rows[0]?.ok) {
      this.leader = client;
      client.on('error', () => undefined);
      return true;
    }
    client.release();
    return false;
  }

  private async follow(signal: AbortSignal): Promise<void> {
    const active = await this.prepare();
    const batchSize = this.options.batchSize ?? 500;
    for await (const batch of this.options.store.subscribeToAll({
      after: earliest(active),
      batchSize,
      signal,
    })) {
      if (batch.length > 0) await this.applyBatch(active, batch);
      if (batch.length < batchSize) await this.swapCaughtUp(active);
    }
  }

  private async prepare(): Promise<Active[]> {
    await migrateCheckpoints(this.options.pool);
    for (const projection of this.options.projections) await installProjection(this.options.pool, projection);
    const rows = await readCheckpoints(this.options.pool);
    const active = this.options.projections.map((projection) => {
      const row = rows.find((r) => r.projection === projection.name && r.version === projection.version);
      if (!row) throw new Error(`projection ${projection.name} v${projection.version} has no checkpoint`);
      return { projection, status: row.status, position: row.position };
    });
    const live = active.filter((a) => a.status === 'live');
    if (live.length > 0) this.options.progress?.advance(earliest(live));
    return active;
  }

  private async applyBatch(active: Active[], batch: readonly RecordedEvent[]): Promise<void> {
    const end = batch[batch.length - 1]!.position;
    const changed: string[] = [];
    await inTransaction(this.options.pool, async (client) => {
      for (const a of active) {
        const events = batch.filter(
          (e) => a.projection.eventTypes.has(e.type) && comparePositions(e.position, a.position) > 0,
        );
        if (events.length > 0)
          changed.push(...(await a.projection.apply(contextFor(a.projection, client), events)));
        if (comparePositions(end, a.position) > 0) {
          const moved = await advanceCheckpoint(
            client,
            a.projection.name,
            a.projection.version,
            a.position,
            end,
          );
          if (!moved) throw new Error(`checkpoint of ${a.projection.name} moved under us (another runner?)`);
        }
      }
      const keys = changed.length > 200 ? ['*'] : changed;
      await client.query('SELECT pg_notify($1, $2)', [
        PROGRESS_CHANNEL,
        `${formatPosition(end)} ${keys.join(' ')}`.trim(),
      ]);
    });
    for (const a of active) if (comparePositions(end, a.position) > 0) a.position = end;
    const live = active.filter((a) => a.status === 'live');
    if (live.length > 0) this.options.progress?.advance(earliest(live), changed);
    this.options.onBatch?.({
      events: batch.length,
      position: end,
      lastRecordedAt: batch[batch.length - 1]?.metadata.recordedAt,
    });
  }

  private async swapCaughtUp(active: Active[]): Promise<void> {
    const building = active.filter((x) => x.status === 'building');
    for (const a of building) {
      await swapIn(this.options.pool, a.projection);
      a.status = 'live';
      this.options.logger?.info('projection version swapped in', {
        projection: a.projection.name,
        version: a.projection.version,
      });
    }
    // Readers waiting for a position this version has already applied must not wait for the next batch;
    // their cached rows came from the old version, so all of them are stale.
    if (building.length > 0) this.options.progress?.advance(earliest(active), ['*']);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

function earliest(active: readonly { position: GlobalPosition }[]): GlobalPosition {
  return minPosition(active.map((a) => a.position));
}
