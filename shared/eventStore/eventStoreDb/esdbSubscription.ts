import { excludeSystemEvents, type EventStoreDBClient } from '@eventstore/db-client';
import {
  START,
  comparePositions,
  type RecordedEvent,
  type SubscribeOptions,
} from '#shared/eventStore/eventStore';
import { fromEsdbEvent } from './esdbEvents';
import { toReadPosition } from './esdbReads';

export const DEFAULT_BATCH_SIZE = 500;

/**
 * Batches what the server has already pushed: a batch ends when it is full or when nothing more is
 * buffered, so a live subscriber gets each event at once and a catching-up one gets full batches.
 */
export async function* subscribeToAll(
  client: EventStoreDBClient,
  options: SubscribeOptions = {},
): AsyncGenerator<readonly RecordedEvent[]> {
  const { signal } = options;
  if (signal?.aborted) return;
  const after = options.after ?? START;
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const subscription = client.subscribeToAll({
    fromPosition: toReadPosition(after),
    filter: excludeSystemEvents(),
  });
  const stop = (): void => void subscription.unsubscribe().catch(() => undefined);
  signal?.addEventListener('abort', stop, { once: true });
  let batch: RecordedEvent[] = [];
  try {
    for await (const resolved of subscription) {
      const event = resolved.event;
      // Delivery is strictly after `after`, whatever the server does with the start position.
      if (event && comparePositions(event.position, after) > 0) batch.push(fromEsdbEvent(event));
      if (batch.length >= batchSize || (batch.length > 0 && subscription.readableLength === 0)) {
        yield batch;
        batch = [];
      }
    }
  } catch (error) {
    if (!signal?.aborted) throw error;
  } finally {
    signal?.removeEventListener('abort', stop);
    await subscription.unsubscribe().catch(() => undefined);
  }
}
