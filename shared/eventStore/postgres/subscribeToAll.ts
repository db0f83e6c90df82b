import type pg from 'pg';
import { START, type RecordedEvent, type SubscribeOptions } from '#shared/eventStore/eventStore';
import { AppendListener } from './appendListener';
import { readSubscriptionPage } from './readAll';
import type { SqlNames } from './sqlNames';

export const DEFAULT_BATCH_SIZE = 500;
/** Longest wait without a notification. */
const IDLE_POLL_MS = 250;
const FIRST_HELD_BACK_POLL_MS = 5;
/** Cap of the held-back back-off: a long-open transaction is looked at again at least this often. */
const MAX_HELD_BACK_POLL_MS = 250;

export interface SubscriptionContext {
  readonly pool: pg.Pool;
  readonly names: SqlNames;
  readonly listenerConfig: pg.ClientConfig;
  /** Aborts when the store closes. */
  readonly closing: AbortSignal;
  /** Longest wait without a notification (default 250 ms); tests lengthen it to isolate other wake-ups. */
  readonly idlePollMs?: number;
  /** The listeners of this store's subscriptions, woken directly by its own appends. */
  readonly localListeners?: Set<AppendListener>;
  /** The payload of this store's own NOTIFYs (AppendNotifier), which its listeners ignore. */
  readonly origin?: string;
}

/** Catch-up in batches, then live: waits for an append's NOTIFY, or polls. */
export async function* subscribeToAll(
  context: SubscriptionContext,
  options: SubscribeOptions = {},
): AsyncGenerator<readonly RecordedEvent[]> {
  const signal = options.signal ? AbortSignal.any([options.signal, context.closing]) : context.closing;
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const idlePollMs = context.idlePollMs ?? IDLE_POLL_MS;
  const listener = new AppendListener(
    context.listenerConfig,
    context.names,
    context.localListeners ? context.origin : undefined,
  );
  let after = options.after ?? START;
  let heldBackPollMs = FIRST_HELD_BACK_POLL_MS;
  context.localListeners?.add(listener);
  try {
    if (signal.aborted) return;
    await listener.start();
    while (!signal.aborted) {
      listener.reset();
      // The page and whether more is recorded past it, in one statement.
      const { events: batch, more } = await readSubscriptionPage(
        context.pool,
        context.names,
        after,
        batchSize,
      );
      const last = batch[batch.length - 1];
      if (last) {
        after = last.position;
        heldBackPollMs = FIRST_HELD_BACK_POLL_MS;
        yield batch;
      }
      if (batch.length === batchSize || signal.aborted) continue;
      // Events behind a still-open older transaction: it may commit any moment and may never
      // NOTIFY (it need not be an append), so look again soon, backing off while it stays open.
      const heldBack = more;
      await listener.wait(heldBack ? heldBackPollMs : idlePollMs, signal);
      heldBackPollMs = heldBack
        ? Math.min(heldBackPollMs * 2, MAX_HELD_BACK_POLL_MS)
        : FIRST_HELD_BACK_POLL_MS;
    }
  } finally {
    context.localListeners?.delete(listener);
    await listener.close();
  }
}
