import type { Pool } from 'pg';
import type { EventStore } from '#shared/eventStore/eventStore';
import type { HealthCheck } from '#shared/http/system/healthChecks';
import { eventMessages, topicsOf } from '#shared/integrationBus/eventMessages';
import { brainVisibilityAtEvents } from '#shared/integrationBus/brainVisibilityAtEvents';
import type { IntegrationBus } from '#shared/integrationBus/integrationBus';
import type { Logger } from '#shared/logging/logger';
import type { Metrics } from '#shared/metrics/metrics';
import { LeaderLease, leadOrStandBy } from '#shared/projections/leaderLease';
import type { Backoff } from '#shared/runtime/backoff';
import { FollowerCheckpoint } from '#shared/runtime/followerCheckpoint';
import { loopHealthCheck } from '#shared/platform/loopHealthCheck';
import { type SupervisedLoop, startSupervisedLoop } from '#shared/runtime/supervisedLoop';

export const RELAY_LOOP = 'kafka_relay';
export const RELAY_LEADER_LOCK = 'catalogue:relay:leader';

export interface RelayDeps {
  readonly store: EventStore;
  /** The read models' database: the checkpoint and the leader lock. */
  readonly pool: Pool;
  readonly bus: IntegrationBus;
  /** Topics are `<prefix>.<name>` (KAFKA_TOPIC_PREFIX). */
  readonly topicPrefix: string;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly batchSize?: number;
  readonly backoff?: Partial<Backoff>;
  /** How often an instance that does not lead looks whether the leader is gone. */
  readonly standbyPollMs?: number;
}

export interface RunningRelay {
  readonly loop: SupervisedLoop;
  readonly healthCheck: HealthCheck;
  /** Whether this instance holds the leader lock (the one that publishes). */
  readonly leading: () => boolean;
  stop(): Promise<void>;
}

/**
 * The relay: follows the global order from its checkpoint and hands the events other consumers are
 * told about (eventMessages) to the integration bus, batch by batch, in order. The checkpoint moves
 * only after the bus acknowledged a batch: a crash between the two sends that batch again, so
 * delivery is at least once, and consumers deduplicate by the event id (header `event_id`). Of
 * several instances one publishes (a PostgreSQL leader lock); the others stand by. Faults of the
 * store, the database or the broker are retried with backoff by the supervised loop.
 */
export function startRelay(deps: RelayDeps): RunningRelay {
  const lease = new LeaderLease(deps.pool, RELAY_LEADER_LOCK);
  const checkpoint = new FollowerCheckpoint(deps.pool, 'relay_checkpoints', RELAY_LOOP);
  const topics = topicsOf(deps.topicPrefix);

  async function publishFrom(signal: AbortSignal, up: () => void): Promise<void> {
    await checkpoint.migrate();
    await untilStopped(deps.bus.prepare(topics), signal);
    const from = await checkpoint.read();
    up();
    for await (const batch of deps.store.subscribeToAll({
      after: from,
      batchSize: deps.batchSize ?? 500,
      signal,
    })) {
      if (batch.length === 0) continue;
      // Each brain message carries the brain's visibility as of its event, folded from the stream.
      const visibility = await brainVisibilityAtEvents(deps.store, batch);
      const messages = eventMessages(batch, deps.topicPrefix, visibility);
      await untilStopped(deps.bus.publish(messages), signal);
      await checkpoint.advance(batch[batch.length - 1]!.position);
      const counts = new Map<string, number>();
      for (const { topic } of messages) counts.set(topic, (counts.get(topic) ?? 0) + 1);
      for (const [topic, count] of counts) deps.metrics.eventsPublished(topic, count);
    }
  }

  /**
   * A broker call ends when it ends or when the relay stops, whichever is first: the client may go
   * on retrying a broker that is away for a minute, and a stop must not wait for that (the batch is
   * not checkpointed, so it is sent again next time).
   */
  function untilStopped(work: Promise<void>, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(new Error('the relay is stopping'));
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => reject(new Error('the relay is stopping'));
      signal.addEventListener('abort', onAbort, { once: true });
      work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  const loop = startSupervisedLoop({
    name: RELAY_LOOP,
    body: (body) => leadOrStandBy(lease, body, publishFrom, deps.standbyPollMs ?? 1000),
    logger: deps.logger,
    metrics: deps.metrics,
    backoff: deps.backoff,
  });
  return {
    loop,
    healthCheck: loopHealthCheck(() => loop.status()),
    leading: () => lease.isHeld,
    async stop() {
      await loop.stop();
      await lease.release();
    },
  };
}
