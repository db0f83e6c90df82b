import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { StartedTestContainer } from 'testcontainers';
import { createEventStoreDbEventStore } from '../../shared/eventStore/eventStoreDb/eventStoreDbEventStore';
import { describeEventStoreContract } from './eventStore.contract';

const SUITE = 'EventStoreDB contract suite';
const IMAGE = 'eventstore/eventstore:24.10';

/**
 * Asks testcontainers for a container runtime in a child process: jest registers suites
 * synchronously, and a child can be killed at the deadline without leaving handles behind.
 * Exit 0: a runtime answered; 1: none; 3: testcontainers itself could not load.
 */
const PROBE = `
setTimeout(() => process.exit(1), 4000).unref();
let testcontainers;
try { testcontainers = require(process.argv[1]); } catch { process.exit(3); }
testcontainers.getContainerRuntimeClient().then(() => process.exit(0), () => process.exit(1));
`;

type Availability =
  { readonly connectionString: string } | { readonly docker: true } | { readonly skip: string };

function probeDocker(): number {
  try {
    execFileSync(process.execPath, ['-e', PROBE, require.resolve('testcontainers')], {
      stdio: 'ignore',
      timeout: 4500,
    });
    return 0;
  } catch (error) {
    const status = (error as { status?: number | null }).status;
    return typeof status === 'number' ? status : 1;
  }
}

/** A Docker engine might be there even though testcontainers could not load to ask it. */
function dockerEngineHinted(): boolean {
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock');
}

function availability(): Availability {
  const connectionString = process.env.EVENTSTORE_CONNECTION_STRING;
  if (connectionString) return { connectionString };
  const probe = probeDocker();
  if (probe === 0) return { docker: true };
  if (probe === 3 && dockerEngineHinted()) {
    return { skip: `skipped: ${SUITE} — testcontainers cannot load on Node ${process.version}` };
  }
  return { skip: `skipped: ${SUITE} — no EVENTSTORE_CONNECTION_STRING and no Docker engine` };
}

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

const target = availability();

if ('skip' in target) {
  process.stderr.write(`${target.skip}\n`);
  describe.skip(SUITE, () => {
    describeEventStoreContract('EventStoreDB', { create: () => Promise.reject(new Error('skipped')) });
  });
} else {
  describe(SUITE, () => {
    let container: StartedTestContainer | undefined;
    let connectionString = 'connectionString' in target ? target.connectionString : '';

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
