import type { Projection, ProjectionContext } from '#shared/projections/projection';
import type { SearchWriter } from '#shared/search/searchIndex';
import {
  createSearchExtensions,
  createSearchIndexes,
  createSearchTables,
} from '#shared/search/postgres/searchTables';
import { PLACEMENT_EVENT_TYPES } from './brainMemberships';
import { SearchBatch, type SearchProjectionTables } from './searchBatch';

/**
 * Logical tables: the documents, counts, name words and lexemes are what the PostgreSQL SearchIndex
 * reads (through the views `brain_search`, `brain_search_counts`, `brain_search_words` and
 * `brain_search_lexemes`,
 * createPostgresSearchReader); the lookups hold the names a document denormalises, so the
 * projection never reads another projection's tables (a rebuild of this one alone sees names as
 * they were at each event). Species, atlases and categories
 * cannot be renamed today; a rename event would update its lookup and rewrite the documents that
 * carry that id, as a brain moved to another atlas is rewritten now.
 */
export const SEARCH_INDEX_NAME = 'brain_search';
const TABLES = {
  documents: SEARCH_INDEX_NAME,
  counts: `${SEARCH_INDEX_NAME}_counts`,
  words: `${SEARCH_INDEX_NAME}_words`,
  lexemes: `${SEARCH_INDEX_NAME}_lexemes`,
  species: `${SEARCH_INDEX_NAME}_species`,
  atlases: `${SEARCH_INDEX_NAME}_atlases`,
  categories: `${SEARCH_INDEX_NAME}_categories`,
} as const;

/**
 * The placements' events and those that change who may see a brain: its readers (collaborators)
 * and an embargo lifted. A visibility change is a BrainUpdated.
 */
export const SEARCH_EVENT_TYPES: ReadonlySet<string> = new Set([
  ...PLACEMENT_EVENT_TYPES,
  'BrainCollaboratorAdded',
  'BrainCollaboratorRoleChanged',
  'BrainCollaboratorRemoved',
  'EmbargoLifted',
]);

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
    // v3: the name's words and their dictionary (typo and substring search through them).
    // v4: the lexemes' dictionary (a word prefix matched as the lexemes it starts) and the text
    // and placement columns in one GIN index.
    // v5: visibility, embargo_until and readers (the visibility rule), kept counts of the public
    // documents only.
    // v6: the same columns in the order a search reads them (searchTables DOCUMENT_COLUMNS).
    // v7: an index of the documents by position (the in-memory index reads what was written since).
    // v8: the counts and dictionaries kept by each table's own trigger functions (searchTriggers.ts).
    version: 8,
    tables: Object.values(TABLES),
    eventTypes: SEARCH_EVENT_TYPES,

    async createTables({ client, table }) {
      await createSearchExtensions(client);
      const search = {
        documents: table(TABLES.documents),
        counts: table(TABLES.counts),
        words: table(TABLES.words),
        lexemes: table(TABLES.lexemes),
      };
      await createSearchTables(client, search);
      await createSearchIndexes(client, search);
      await client.query(
        `CREATE TABLE ${table(TABLES.species)} (id integer PRIMARY KEY, name text NOT NULL, scientific_name text NOT NULL)`,
      );
      for (const lookup of [TABLES.atlases, TABLES.categories])
        await client.query(`CREATE TABLE ${table(lookup)} (id integer PRIMARY KEY, name text NOT NULL)`);
    },

    async apply({ client, table }, events) {
      const batch = await SearchBatch.load(client, tablesOf(table), events);
      for (const event of events) await batch.apply(event);
      const { upserts, removals } = await batch.write();
      if (options.mirror) {
        await options.mirror.upsert(upserts);
        await options.mirror.remove(removals);
      }
      // The brains projection already reports brain:<id> for the same events.
      return [];
    },
  };
}

/** The PostgreSQL-only search projection (SEARCH_BACKEND=postgres, the default). */
export const searchProjection = createSearchProjection();

function tablesOf(table: ProjectionContext['table']): SearchProjectionTables {
  return {
    documents: table(TABLES.documents),
    species: table(TABLES.species),
    atlases: table(TABLES.atlases),
    categories: table(TABLES.categories),
  };
}
