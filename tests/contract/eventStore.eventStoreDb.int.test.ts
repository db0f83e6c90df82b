import type { StartedTestContainer } from 'testcontainers';
import { serverAvailability } from '#tests/support/externalServer';
import { createEventStoreDbEventStore } from '#shared/eventStore/eventStoreDb/eventStoreDbEventStore';
import { describeEventStoreContract } from './eventStore.contract';

const SUITE = 'EventStoreDB contract suite';
const IMAGE = 'eventstore/eventstore:24.10';

async function startEventStoreDb(): Promise<{ container: StartedTestContainer; connectionString: string }> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const container = await new GenericContainer(IMAGE)
    .withEnvironment({
      EVENTSTORE_INSECURE: 'true',
      EVENTSTORE_MEM_DB: 'true',
      EVENTSTORE_RUN_PROJECTIONS: 'None',
      EVENTSTORE_CLUSTER_SIZE: '1',
    })
    .withExposedPorts(2113)
    .withWaitStrategy(Wait.forHttp('/health/live', 2113).forStatusCode(204))
    .withStartupTimeout(120_000)
    .start();
  return {
    container,
    connectionString: `esdb://${container.getHost()}:${container.getMappedPort(2113)}?tls=false`,
  };
}

const target = serverAvailability(SUITE, 'EVENTSTORE_CONNECTION_STRING');

if ('skip' in target) {
  process.stderr.write(`${target.skip}\n`);
  describe.skip(SUITE, () => {
    describeEventStoreContract('EventStoreDB', { create: () => Promise.reject(new Error('skipped')) });
  });
} else {
  describe(SUITE, () => {
    let container: StartedTestContainer | undefined;
    let connectionString = 'configured' in target ? target.configured : '';

    beforeAll(async () => {
      if (connectionString) return;
      ({ container, connectionString } = await startEventStoreDb());
    }, 180_000);

    afterAll(async () => {
      await container?.stop();
    });

    describeEventStoreContract('EventStoreDB', {
      create: () => Promise.resolve(createEventStoreDbEventStore({ connectionString })),
    });
  });
}
