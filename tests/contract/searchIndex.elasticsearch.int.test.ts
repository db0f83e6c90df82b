import { randomBytes } from 'node:crypto';
import { Client } from '@elastic/elasticsearch';
import type { StartedTestContainer } from 'testcontainers';
import { serverAvailability } from '#tests/support/externalServer';
import { createElasticsearchSearchIndex } from '#shared/search/elasticsearch/elasticsearchSearchIndex';
import { describeSearchIndexContract } from './searchIndex.contract';

const SUITE = 'Elasticsearch SearchIndex contract suite';
const IMAGE = 'docker.elastic.co/elasticsearch/elasticsearch:9.0.0';

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

const target = serverAvailability(SUITE, 'ELASTICSEARCH_URL');

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
      let url = 'configured' in target ? target.configured : '';
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
