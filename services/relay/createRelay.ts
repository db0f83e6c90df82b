import type { KafkaConfig } from '#shared/config/config';
import type { EventStore } from '#shared/eventStore/eventStore';
import { createKafkaBus } from '#shared/integrationBus/kafka/kafkaBus';
import type { Logger } from '#shared/logging/logger';
import type { Metrics } from '#shared/metrics/metrics';
import type { Infrastructure } from '#shared/platform/openInfrastructure';
import { RELAY_LOOP, startRelay } from './startRelay';
import type { HealthCheck } from '#shared/http/system/healthChecks';

export interface RelayWithBus {
  /** /health/: the relay's loop and the broker. */
  readonly healthChecks: Readonly<Record<string, HealthCheck>>;
  /** Stops the relay, then disconnects from the broker. */
  close(): Promise<void>;
}

/** The relay as the composition roots start it: the configured store, Kafka as the bus. */
export function createRelay(
  kafka: KafkaConfig,
  infra: Pick<Infrastructure, 'readModels'>,
  store: EventStore,
  logger: Logger,
  metrics: Metrics,
): RelayWithBus {
  const relayLogger = logger.child({ component: 'relay' });
  const bus = createKafkaBus({ brokers: kafka.brokers, clientId: kafka.clientId, logger: relayLogger });
  const relay = startRelay({
    store,
    pool: infra.readModels,
    bus,
    topicPrefix: kafka.topicPrefix,
    logger: relayLogger,
    metrics,
  });
  return {
    healthChecks: { [RELAY_LOOP]: relay.healthCheck, kafka: () => bus.ping() },
    async close() {
      try {
        await relay.stop();
      } finally {
        await bus.close();
      }
    },
  };
}
