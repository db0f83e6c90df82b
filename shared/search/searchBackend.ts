import { Client } from '@elastic/elasticsearch';
import type { Pool } from 'pg';
import type { Config } from '#shared/config/config';
import { createElasticsearchSearchIndex } from './elasticsearch/elasticsearchSearchIndex';
import type { Logger } from '#shared/logging/logger';
import { createPostgresSearchReader } from './postgres/postgresSearchIndex';
import { MemorySearchIndex } from './memory/memorySearchIndex';
import type { SearchReader, SearchRebuild, SearchWriter } from './searchIndex';

/** The alias queries and live writes go through in Elasticsearch. */
export const ELASTICSEARCH_ALIAS = 'catalogue-brains';

/** What SEARCH_BACKEND selects: where the brains list searches, and what the projector also feeds. */
export interface SearchBackend {
  readonly reader: SearchReader;
  /**
   * Fed by the search projection besides its own PostgreSQL tables (Elasticsearch); undefined
   * when those tables are the index (PostgreSQL).
   */
  readonly mirror: SearchWriter | undefined;
  /**
   * `npm run rebuild`: a new mirror index built beside the live one, swapped in by `finish`
   * (Elasticsearch); undefined when the projection's own tables are the index.
   */
  readonly beginRebuild: (() => Promise<SearchRebuild>) | undefined;
  /**
   * Resolves once the documents this process keeps in memory (SEARCH_IN_MEMORY) are loaded, or
   * their first load has failed (searches then go to PostgreSQL); at once when none are kept.
   */
  loaded(): Promise<void>;
  close(): Promise<void>;
}

/**
 * PostgreSQL (the default): the search projection's tables answer, so search is as fresh as every
 * other read model. Elasticsearch: the projection also writes there (idempotent by event position);
 * its documents become searchable at the index's next refresh (about a second), so a brain written
 * a moment ago may not be found yet.
 */
export async function openSearchBackend(
  config: Pick<Config, 'searchBackend' | 'elasticsearchUrl' | 'searchInMemory'>,
  pool: Pool,
  queries?: { readonly logger: Logger },
): Promise<SearchBackend> {
  if (config.searchBackend === 'postgres') {
    const statements = createPostgresSearchReader({ pool });
    // Only a process that answers queries keeps the documents in memory (SEARCH_IN_MEMORY).
    const memory =
      queries && config.searchInMemory
        ? new MemorySearchIndex({ pool, fallback: statements, logger: queries.logger })
        : undefined;
    memory?.start();
    return {
      reader: memory ?? statements,
      mirror: undefined,
      beginRebuild: undefined,
      loaded: () => memory?.loaded() ?? Promise.resolve(),
      close: () => {
        memory?.close();
        return Promise.resolve();
      },
    };
  }
  if (!config.elasticsearchUrl) throw new Error('SEARCH_BACKEND=elasticsearch needs ELASTICSEARCH_URL');
  const client = new Client({ node: config.elasticsearchUrl });
  try {
    const index = createElasticsearchSearchIndex({ client, alias: ELASTICSEARCH_ALIAS });
    await index.install();
    return {
      reader: index,
      mirror: index,
      beginRebuild: () => index.beginRebuild(),
      loaded: () => Promise.resolve(),
      close: () => client.close(),
    };
  } catch (error) {
    await client.close();
    throw error;
  }
}
