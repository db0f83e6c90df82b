import { randomBytes, randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import type { StartedTestContainer } from 'testcontainers';
import type { BusMessage, IntegrationBus } from '#shared/integrationBus/integrationBus';
import { createKafkaBus } from '#shared/integrationBus/kafka/kafkaBus';
import { createLogger } from '#shared/logging/logger';
import { createMetrics } from '#shared/metrics/metrics';
import { startRelay } from '#services/relay/startRelay';
import { eventStoreDatabase } from '#tests/support/eventStoreDatabase';
import { serverAvailability } from '#tests/support/externalServer';

const SUITE = 'Kafka integration bus contract suite';
const IMAGE = 'apache/kafka:3.9.1';

/** A single-node KRaft broker (as deploy/compose.yaml runs it), advertised on the mapped port. */
async function startKafka(): Promise<{ container: StartedTestContainer; brokers: string }> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const port = 9094;
  const container = await new GenericContainer(IMAGE)
    .withExposedPorts({ container: port, host: port })
    .withEnvironment({
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_LISTENERS: 'PLAINTEXT://:9092,CONTROLLER://:9093,EXTERNAL://:9094',
      KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://localhost:9092,EXTERNAL://localhost:${port}`,
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,EXTERNAL:PLAINTEXT',
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_INTER_BROKER_LISTENER_NAME: 'PLAINTEXT',
      KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
      KAFKA_NUM_PARTITIONS: '3',
    })
    .withWaitStrategy(Wait.forLogMessage(/Kafka Server started/))
    .withStartupTimeout(180_000)
    .start();
  return { container, brokers: `${container.getHost()}:${port}` };
}

const target = serverAvailability(SUITE, 'KAFKA_BROKERS');

/** Reads `count` messages of `topics` from the beginning with a consumer group of its own. */
async function consume(brokers: string, topics: readonly string[], count: number): Promise<BusMessage[]> {
  const kafka = new Kafka({
    brokers: brokers.split(','),
    clientId: 'contract-consumer',
    logLevel: logLevel.NOTHING,
  });
  const consumer = kafka.consumer({ groupId: `contract-${randomBytes(4).toString('hex')}` });
  await consumer.connect();
  await consumer.subscribe({ topics: [...topics], fromBeginning: true });
  const seen: BusMessage[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`consumed ${seen.length} of ${count}`)), 60_000);
      void consumer.run({
        eachMessage: async ({ topic, message }) => {
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(message.headers ?? {})) headers[name] = String(value);
          seen.push({ topic, key: String(message.key), value: String(message.value), headers });
          if (seen.length >= count) {
            clearTimeout(timer);
            resolve();
          }
          return Promise.resolve();
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return seen;
}

function message(topic: string, key: string, n: number): BusMessage {
  return {
    topic,
    key,
    value: JSON.stringify({ key, n }),
    headers: { event_id: `${key}-${n}`, event_type: 'Something', 'content-type': 'application/json' },
  };
}

if ('skip' in target) {
  process.stderr.write(`${target.skip}\n`);
  describe.skip(SUITE, () => {
    test('publishes', () => undefined);
  });
} else {
  describe(SUITE, () => {
    let container: StartedTestContainer | undefined;
    let brokers: string;
    let bus: IntegrationBus;
    const run = `contract-${randomBytes(4).toString('hex')}`;
    const topics = [`${run}.brains`, `${run}.uploads`];

    beforeAll(async () => {
      brokers = 'configured' in target ? target.configured : '';
      if (!brokers) ({ container, brokers } = await startKafka());
      bus = createKafkaBus({
        brokers: brokers.split(','),
        clientId: 'contract',
        logger: createLogger({ service: 'kafka-contract', level: 'silent' }),
      });
    }, 240_000);

    afterAll(async () => {
      await bus?.close();
      await container?.stop();
    });

    test('prepare creates the missing topics, and again changes nothing', async () => {
      await bus.prepare(topics);
      await bus.prepare(topics);
      const admin = new Kafka({ brokers: brokers.split(','), logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      try {
        expect(await admin.listTopics()).toEqual(expect.arrayContaining(topics));
      } finally {
        await admin.disconnect();
      }
    });

    test('published messages arrive with their key, value and headers, in order per key', async () => {
      const keys = ['brain-1', 'brain-2', 'upload-a'];
      const sent: BusMessage[] = [];
      for (let n = 0; n < 20; n++)
        for (const key of keys) sent.push(message(key.startsWith('brain') ? topics[0]! : topics[1]!, key, n));
      for (let i = 0; i < sent.length; i += 13) await bus.publish(sent.slice(i, i + 13));
      const received = await consume(brokers, topics, sent.length);
      expect(received).toHaveLength(sent.length);
      for (const key of keys)
        expect(received.filter((m) => m.key === key)).toEqual(sent.filter((m) => m.key === key));
    }, 90_000);

    test('ping answers while the broker is there', async () => {
      await expect(bus.ping()).resolves.toBeUndefined();
    });

    describe('the relay through Kafka', () => {
      const db = eventStoreDatabase('relay_kafka');

      test('events appended to the store arrive on their topics, secrets removed', async () => {
        const prefix = `${run}-relay`;
        const relay = startRelay({
          store: db.store,
          pool: db.pool,
          bus,
          topicPrefix: prefix,
          logger: createLogger({ service: 'relay-contract', level: 'silent' }),
          metrics: createMetrics('relay_contract'),
        });
        try {
          const metadata = {
            actor: 'system',
            requestId: null,
            correlationId: 'c',
            causationId: null,
            schemaVersion: 1,
          };
          await db.store.appendToStream('user-1', [
            {
              id: randomUUID(),
              type: 'UserRegistered',
              data: { userId: 1, passwordHash: 'secret' },
              metadata,
            },
          ]);
          await db.store.appendToStream('brain-1', [
            { id: randomUUID(), type: 'BrainCreated', data: { brainId: 1 }, metadata },
          ]);
          const received = await consume(brokers, [`${prefix}.users`, `${prefix}.brains`], 2);
          expect(received.map((m) => [m.topic, m.key, m.headers.event_type])).toEqual(
            expect.arrayContaining([
              [`${prefix}.users`, 'user-1', 'UserRegistered'],
              [`${prefix}.brains`, 'brain-1', 'BrainCreated'],
            ]),
          );
          for (const m of received) expect(m.value).not.toContain('secret');
        } finally {
          await relay.stop();
        }
      }, 90_000);
    });
  });
}
