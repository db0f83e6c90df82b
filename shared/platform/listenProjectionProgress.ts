import pg from 'pg';
import { parsePosition } from '#shared/eventStore/eventStore';
import type { Logger } from '#shared/logging/logger';
import { PROGRESS_CHANNEL } from '#shared/projections/applyBatch';
import type { ProjectionProgress } from '#shared/projections/projectionProgress';
import { readLivePosition } from '#shared/projections/checkpointStore';
import type { LoopBody, LoopMetrics, SupervisedLoop } from '#shared/runtime/supervisedLoop';
import { startSupervisedLoop } from '#shared/runtime/supervisedLoop';
import { abortableSleep } from '#shared/runtime/abortableSleep';
import { asError } from '#shared/errors/asError';

export const PROGRESS_LISTENER_LOOP = 'projection_progress_listener';
const POLL_INTERVAL_MS = 1000;
const CONNECT_TIMEOUT_MS = 5000;

export interface ProgressListener {
  readonly loop: SupervisedLoop;
  close(): Promise<void>;
}

/**
 * For an API process without its own projector: follows the projector's progress through
 * PostgreSQL NOTIFY (sent in the projection's own transaction, so only after commit), with a
 * periodic read of the checkpoints in case a notification is missed. In a supervised loop: after an
 * outage it reconnects by itself and re-reads the checkpoints at once, so writers are released
 * as soon as the projector has caught up.
 */
export function listenProjectionProgress(
  connectionString: string,
  readModels: pg.Pool,
  progress: ProjectionProgress,
  logger: Logger,
  metrics?: LoopMetrics,
): ProgressListener {
  const poll = async (): Promise<void> => {
    const live = await readLivePosition(readModels);
    if (live) progress.advance(live);
  };

  const body = async ({ signal, up }: LoopBody): Promise<void> => {
    const client = new pg.Client({ connectionString, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    const lost = new AbortController();
    const onLost = (error?: Error): void => lost.abort(error ?? new Error('the LISTEN connection ended'));
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (msg) => {
      const [position, ...keys] = (msg.payload ?? '').split(' ');
      const parsed = position ? parsePosition(position) : undefined;
      if (parsed) progress.advance(parsed, keys);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${PROGRESS_CHANNEL}`);
      progress.advance(progress.position, ['*']); // anything cached while not listening may be stale
      const awake = AbortSignal.any([signal, lost.signal]);
      while (!awake.aborted) {
        await poll();
        up();
        await abortableSleep(POLL_INTERVAL_MS, awake);
      }
      if (!signal.aborted) throw asError(lost.signal.reason);
    } finally {
      await client.end().catch(() => undefined);
    }
  };

  const loop = startSupervisedLoop({
    name: PROGRESS_LISTENER_LOOP,
    body,
    logger,
    metrics,
    backoff: { initialMs: 200, maxMs: 2000 },
  });
  const stopWaking = progress.onWait(() => loop.wake());
  return {
    loop,
    async close() {
      stopWaking();
      await loop.stop();
    },
  };
}
