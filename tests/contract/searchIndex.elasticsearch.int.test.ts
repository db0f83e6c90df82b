import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { Client } from '@elastic/elasticsearch';
import type { StartedTestContainer } from 'testcontainers';
import { createElasticsearchSearchIndex } from '../../shared/search/elasticsearch/elasticsearchSearchIndex';
import { describeSearchIndexContract } from './searchIndex.contract';

const SUITE = 'Elasticsearch SearchIndex contract suite';
const IMAGE = 'docker.elastic.co/elasticsearch/elasticsearch:9.0.0';

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

type Availability = { readonly url: string } | { readonly docker: true } | { readonly skip: string };

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

function availability(): Availability {
  const url = process.env.ELASTICSEARCH_URL;
  if (url) return { url };
  const probe = probeDocker();
  if (probe === 0) return { docker: true };
  if (probe === 3 && (Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock')))
    return { skip: `skipped: ${SUITE} — testcontainers cannot load on Node ${process.version}` };
  return { skip: `skipped: ${SUITE} — no ELASTICSEARCH_URL and no Docker engine` };
}

async function startElasticsearch(): Promise<{ container: StartedTestContainer; url: string }> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const container = await new GenericContainer(IMAGE)
    .withEnvironment({
      'discovery.type': 'single-node',
      'xpack.security.enabled': 'false',
      ES_JAVA_OPTS: '-Xms512m -Xmx512m',
    })
    .withExposedPorts(9200)
    .withWaitStrategy(Wait.forHttp('/_cluster/health?wait_for_status=yellow', 9200).forStatusCode(200))
    .withStartupTimeout(180_000)
    .start();
  return { container, url: `http://${container.getHost()}:${container.getMappedPort(9200)}` };
}

const target = availability();

if ('skip' in target) {
  process.stderr.write(`${target.skip}\n`);
  describe.skip(SUITE, () => {
    describeSearchIndexContract('Elasticsearch', { create: () => Promise.reject(new Error('skipped')) });
  });
} else {
  describe(SUITE, () => {
    const run = `search-test-${randomBytes(4).toString('hex')}`;
    let container: StartedTestContainer | undefined;
    let client: Client;

    beforeAll(async () => {
      let url = 'url' in target ? target.url : '';
      if (!url) ({ container, url } = await startElasticsearch());
      client = new Client({ node: url });
    }, 240_000);

    afterAll(async () => {
      await client?.indices.delete({ index: `${run}-*`, allow_no_indices: true }, { ignore: [404] });
      await client?.close();
      await container?.stop();
    });

    describeSearchIndexContract('Elasticsearch', {
      // An alias of its own per test (the run's prefix lets afterAll delete them all).
      async create() {
        const index = createElasticsearchSearchIndex({
          client,
          alias: `${run}-${randomBytes(4).toString('hex')}`,
          replicas: 0,
          refresh: 'wait_for',
        });
        await index.install();
        return index;
      },
    });
  });
}
