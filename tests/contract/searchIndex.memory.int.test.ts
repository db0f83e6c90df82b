import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { GlobalPosition } from '#shared/eventStore/eventStore';
import { createSilentLogger } from '#shared/logging/logger';
import { migrateCheckpoints } from '#shared/projections/checkpointStore';
import { READ_MODEL_SCHEMA } from '#shared/projections/projection';
import { MemorySearchIndex } from '#shared/search/memory/memorySearchIndex';
import { createPostgresSearchIndex } from '#shared/search/postgres/postgresSearchIndex';
import type { SearchIndex, SearchReader } from '#shared/search/searchIndex';
import { createTestDatabase } from '#tests/support/testPostgres';
import { describeSearchIndexContract } from './searchIndex.contract';

let pool: pg.Pool;
const indexes: MemorySearchIndex[] = [];

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await createTestDatabase('search_memory'), max: 4 });
  await migrateCheckpoints(pool);
});

afterAll(async () => {
  for (const index of indexes) index.close();
  await pool.end();
});

/**
 * The contract, queried through the in-memory index: writes go to a PostgreSQL index of their own
 * (the search projection's tables stand-in), each followed by its checkpoint moving to the write's
 * position as the projection's runner moves it, and a finished rebuild going live as a new version.
 * Every text search the index can answer is answered from memory (searches wait for the first load).
 */
describeSearchIndexContract('in memory, over PostgreSQL', {
  async create() {
    const name = `search_${randomBytes(5).toString('hex')}`;
    const tables = createPostgresSearchIndex({ pool, name });
    await tables.install();
    let version = 1;
    let head: GlobalPosition = { commit: 0n, prepare: 0n };
    await pool.query(
      `INSERT INTO ${READ_MODEL_SCHEMA}.projection_checkpoints (projection, version, status, commit_position, prepare_position)
       VALUES ($1, 1, 'live', 0, 0)`,
      [name],
    );
    const advance = async (positions: readonly GlobalPosition[]): Promise<void> => {
      for (const p of positions)
        if (p.commit > head.commit || (p.commit === head.commit && p.prepare > head.prepare)) head = p;
      await pool.query(
        `UPDATE ${READ_MODEL_SCHEMA}.projection_checkpoints SET commit_position = $2, prepare_position = $3, version = $4
          WHERE projection = $1`,
        [name, head.commit.toString(), head.prepare.toString(), version],
      );
    };
    const memory = new MemorySearchIndex({
      pool,
      fallback: tables,
      logger: createSilentLogger(),
      projection: name,
      documentsView: `public."${name}"`,
      wordsView: `public."${name}_words"`,
      pageSize: 7,
    });
    indexes.push(memory);
    const reader: SearchReader = memory;
    const index: SearchIndex = {
      install: () => tables.install(),
      async upsert(entries) {
        await tables.upsert(entries);
        await advance(entries.map((e) => e.position));
      },
      async remove(entries) {
        await tables.remove(entries);
        await advance(entries.map((e) => e.position));
      },
      async query(query, options) {
        await memory.loaded();
        return reader.query(query, options);
      },
      async beginRebuild() {
        const rebuild = await tables.beginRebuild();
        return {
          upsert: (entries) => rebuild.upsert(entries),
          remove: (entries) => rebuild.remove(entries),
          abandon: () => rebuild.abandon(),
          async finish() {
            await rebuild.finish();
            // The rebuilt tables start over at their own positions: another version, loaded again.
            version++;
            head = { commit: 0n, prepare: 0n };
            await advance([]);
          },
        };
      },
    };
    return index;
  },
});
