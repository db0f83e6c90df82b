import type { Projection, ProjectionContext } from '../../../shared/projections/projection';
import type { RecordedEvent } from '../../../shared/eventStore/eventStore';
import type { CategoryEvent } from '../../../shared/domain/categories/events';
import type { SpeciesEvent } from '../../../shared/domain/species/events';
import type { AtlasEvent } from '../../../shared/domain/atlases/events';
import type { BrainEvent } from '../../../shared/domain/brains/events';
import type { SearchRemoval, SearchUpsert, SearchWriter } from '../../../shared/search/searchIndex';
import { createSearchIndexes, createSearchTables } from '../../../shared/search/postgres/searchTables';
import {
  deleteDocument,
  insertDocument,
  type SearchProjectionTables,
  updateDocument,
} from './searchDocumentSql';

type Handled = CategoryEvent | SpeciesEvent | AtlasEvent | BrainEvent;

/**
 * Logical tables: the documents and counts are what the PostgreSQL SearchIndex reads (through the
 * views `brain_search` and `brain_search_counts`, createPostgresSearchReader); the lookups hold the
 * names a document denormalises, so the projection never reads another projection's tables (a
 * rebuild of this one alone sees names as they were at each event).
 */
export const SEARCH_INDEX_NAME = 'brain_search';
const TABLES = {
  documents: SEARCH_INDEX_NAME,
  counts: `${SEARCH_INDEX_NAME}_counts`,
  species: `${SEARCH_INDEX_NAME}_species`,
  atlases: `${SEARCH_INDEX_NAME}_atlases`,
  categories: `${SEARCH_INDEX_NAME}_categories`,
} as const;

export interface SearchProjectionOptions {
  /**
   * Another index fed with every document this projection writes (Elasticsearch), inside the
   * batch's transaction: a failure rolls the batch back and it is retried, and the mirror's writes
   * are idempotent by event position, so a replay after a crash changes nothing there.
   */
  readonly mirror?: SearchWriter;
}

/**
 * The search index as a projection: its writes commit in the runner's transaction with its
 * checkpoint (exactly-once), a new version builds beside the live one and is swapped in like any
 * projection, and read-your-writes waits for it with the others.
 */
export function createSearchProjection(options: SearchProjectionOptions = {}): Projection {
  return {
    name: 'search',
    version: 1,
    tables: Object.values(TABLES),
    eventTypes: new Set([
      'CategoryCreated',
      'SpeciesCreated',
      'AtlasCreated',
      'BrainCreated',
      'BrainUpdated',
      'BrainDeleted',
    ]),

    async createTables({ client, table }) {
      await client.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
      await createSearchTables(client, { documents: table(TABLES.documents), counts: table(TABLES.counts) });
      await createSearchIndexes(client, table(TABLES.documents));
      await client.query(
        `CREATE TABLE ${table(TABLES.species)} (id integer PRIMARY KEY, name text NOT NULL, scientific_name text NOT NULL)`,
      );
      for (const lookup of [TABLES.atlases, TABLES.categories])
        await client.query(`CREATE TABLE ${table(lookup)} (id integer PRIMARY KEY, name text NOT NULL)`);
    },

    async apply(ctx, events) {
      const writes: Writes = { upserts: [], removals: [] };
      for (const recorded of events) await applyOne(ctx, recorded, writes);
      if (options.mirror) {
        await options.mirror.upsert(writes.upserts);
        await options.mirror.remove(writes.removals);
      }
      // The brains projection already reports brain:<id> for the same events.
      return [];
    },
  };
}

/** The PostgreSQL-only search projection (SEARCH_BACKEND=postgres, the default). */
export const searchProjection = createSearchProjection();

interface Writes {
  readonly upserts: SearchUpsert[];
  readonly removals: SearchRemoval[];
}

async function applyOne({ client, table }: ProjectionContext, recorded: RecordedEvent, writes: Writes) {
  const event = { type: recorded.type, data: recorded.data } as Handled;
  const t: SearchProjectionTables = {
    documents: table(TABLES.documents),
    species: table(TABLES.species),
    atlases: table(TABLES.atlases),
    categories: table(TABLES.categories),
  };
  const { position } = recorded;
  const upsert = (documents: readonly SearchUpsert['document'][]): void => {
    for (const document of documents) writes.upserts.push({ document, position });
  };
  switch (event.type) {
    case 'CategoryCreated':
      await client.query(`INSERT INTO ${t.categories} (id, name) VALUES ($1, $2)`, [
        event.data.categoryId,
        event.data.name,
      ]);
      return;
    case 'SpeciesCreated':
      await client.query(`INSERT INTO ${t.species} (id, name, scientific_name) VALUES ($1, $2, $3)`, [
        event.data.speciesId,
        event.data.name,
        event.data.scientificName,
      ]);
      return;
    case 'AtlasCreated':
      await client.query(`INSERT INTO ${t.atlases} (id, name) VALUES ($1, $2)`, [
        event.data.atlasId,
        event.data.name,
      ]);
      return;
    case 'BrainCreated':
      return upsert(await insertDocument(client, t, event.data, position));
    case 'BrainUpdated':
      return upsert(await updateDocument(client, t, event.data.brainId, event.data.changes, position));
    case 'BrainDeleted':
      await deleteDocument(client, t, event.data.brainId);
      writes.removals.push({ brainId: event.data.brainId, position });
      return;
  }
}
