import pg from 'pg';
import { minPosition, parsePosition } from '../eventStore/eventStore';
import type { Logger } from '../logging/logger';
import { PROGRESS_CHANNEL } from '../projections/projectionRunner';
import type { ProjectionProgress } from '../projections/projectionProgress';
import { readCheckpoints } from '../projections/checkpointStore';

/**
 * For an API process without its own projector: follows the projector's progress through
 * PostgreSQL NOTIFY (sent in the projection's own transaction, so only after commit), with a
 * periodic read of the checkpoints in case a notification is missed while reconnecting.
 */
export async function listenProjectionProgress(
  connectionString: string,
  readModels: pg.Pool,
  progress: ProjectionProgress,
  logger: Logger,
): Promise<{ close(): Promise<void> }> {
  let client: pg.Client | undefined;
  let closed = false;

  const poll = async (): Promise<void> => {
    const live = (await readCheckpoints(readModels).catch(() => [])).filter((c) => c.status === 'live');
    if (live.length > 0) progress.advance(minPosition(live.map((c) => c.position)));
  };

  const connect = async (): Promise<void> => {
    if (closed) return;
    const c = new pg.Client({ connectionString });
    c.on('notification', (msg) => {
      const [position, ...keys] = (msg.payload ?? '').split(' ');
      const parsed = position ? parsePosition(position) : undefined;
      if (parsed) progress.advance(parsed, keys);
    });
    c.on('error', (error) => {
      logger.warn('projection progress listener lost its connection', { error: String(error) });
      client = undefined;
      setTimeout(() => void connect().catch(() => undefined), 1000);
    });
    await c.connect();
    await c.query(`LISTEN ${PROGRESS_CHANNEL}`);
    client = c;
    progress.advance(progress.position, ['*']); // anything cached while disconnected may be stale
  };

  await connect();
  await poll();
  const timer = setInterval(() => void poll(), 1000);
  timer.unref();
  return {
    async close() {
      closed = true;
      clearInterval(timer);
      await client?.end().catch(() => undefined);
    },
  };
}
