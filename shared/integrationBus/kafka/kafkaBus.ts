import { CompressionTypes, Kafka, logLevel } from 'kafkajs';
import type { Logger } from '#shared/logging/logger';
import type { BusMessage, IntegrationBus } from '#shared/integrationBus/integrationBus';

export interface KafkaBusOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly logger: Logger;
}

/**
 * The integration bus on Kafka through kafkajs: an idempotent producer (the broker drops its own
 * retried duplicates) with one request in flight, so a retried batch cannot overtake the next one;
 * every send waits for all in-sync replicas. Topics are created with the broker's defaults
 * (partitions, replication) when missing. Connects on first use, and again after a failure.
 */
export function createKafkaBus(options: KafkaBusOptions): IntegrationBus {
  const kafka = new Kafka({
    brokers: [...options.brokers],
    clientId: options.clientId,
    // Bounded (the idempotent producer's default is to retry forever): a broker that stays away fails
    // the call after about half a minute, and the relay's loop reports it and retries with backoff.
    retry: { retries: 8, initialRetryTime: 300, maxRetryTime: 30_000 },
    logLevel: logLevel.WARN,
    // kafkajs logs every retry of every connection; the relay's loop reports an outage once (warn)
    // and its end (info), so kafkajs's own lines are kept for debugging only.
    logCreator: () => (entry) =>
      options.logger.debug(entry.log.message, {
        component: 'kafkajs',
        namespace: entry.namespace,
        ...entry.log,
      }),
  });
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  const admin = kafka.admin();
  const connection = {
    producer: undefined as Promise<void> | undefined,
    admin: undefined as Promise<void> | undefined,
  };

  /** Runs `work` on a connected client; a failure drops the connection, so the next call connects afresh. */
  async function using<T>(
    which: keyof typeof connection,
    client: { connect(): Promise<void>; disconnect(): Promise<void> },
    work: () => Promise<T>,
  ): Promise<T> {
    try {
      await (connection[which] ??= client.connect());
      return await work();
    } catch (error) {
      connection[which] = undefined;
      await client.disconnect().catch(() => undefined);
      throw error;
    }
  }

  return {
    async prepare(topics) {
      await using('admin', admin, async () => {
        const existing = new Set(await admin.listTopics());
        const missing = topics.filter((topic) => !existing.has(topic));
        if (missing.length > 0)
          await admin.createTopics({ waitForLeaders: true, topics: missing.map((topic) => ({ topic })) });
      });
    },
    async publish(messages: readonly BusMessage[]) {
      if (messages.length === 0) return;
      const byTopic = new Map<string, BusMessage[]>();
      for (const message of messages) {
        const list = byTopic.get(message.topic) ?? [];
        list.push(message);
        byTopic.set(message.topic, list);
      }
      await using('producer', producer, () =>
        producer.sendBatch({
          acks: -1,
          compression: CompressionTypes.GZIP,
          topicMessages: [...byTopic].map(([topic, list]) => ({
            topic,
            messages: list.map(({ key, value, headers }) => ({ key, value, headers: { ...headers } })),
          })),
        }),
      );
    },
    async ping() {
      await using('admin', admin, () => admin.describeCluster());
    },
    /** Disconnects at once, also from a connection still being retried. */
    async close() {
      connection.producer = undefined;
      connection.admin = undefined;
      await Promise.allSettled([producer.disconnect(), admin.disconnect()]);
    },
  };
}
