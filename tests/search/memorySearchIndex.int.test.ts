import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Viewer, Visibility } from '#shared/domain/brains/visibility';
import { createSilentLogger } from '#shared/logging/logger';
import { migrateCheckpoints } from '#shared/projections/checkpointStore';
import { READ_MODEL_SCHEMA } from '#shared/projections/projection';
import { MemorySearchIndex } from '#shared/search/memory/memorySearchIndex';
import { createPostgresSearchIndex } from '#shared/search/postgres/postgresSearchIndex';
import type {
  BrainSearchDocument,
  SearchFacet,
  SearchFilters,
  SearchIndex,
  SearchQuery,
  SearchSort,
} from '#shared/search/searchIndex';
import { generator, pick, syntheticText } from '#services/command-api/seedSynthetic/syntheticBrains';
import { searchVocabulary } from '#tests/bench/searchVocabulary';
import { createTestDatabase } from '#tests/support/testPostgres';

/**
 * The in-memory index answers exactly what the PostgreSQL statement answers (ids in order, total,
 * facets) over one generated catalogue, for texts of every kind the bench draws and more (ids,
 * readable ids, one letter, punctuation, hyphens, capitals, accents), under random filters, callers,
 * facets, orders and pages; then again after updates, removals and new brains it catches up with.
 */

const SPECIES = [
  [1, 'Mouse', 'Mus musculus'],
  [2, 'Rat', 'Rattus norvegicus'],
  [3, 'Human', 'Homo sapiens'],
  [4, 'Macaque', 'Macaca mulatta'],
] as const;
const ATLASES = [
  [10, 'Allen Mouse CCFv3', 1],
  [11, 'Waxholm Space rat', 2],
  [12, 'MNI152', 3],
  [13, 'D99 macaque', 4],
] as const;
const CATEGORIES = [
  [100, 'Rodents'],
  [101, 'Primates'],
  [102, 'Developmental'],
] as const;
const VISIBILITIES: readonly Visibility[] = ['public', 'public', 'public', 'public', 'private', 'embargoed'];
const EXTRA_NAMES = [
  'CA1/CA3 field',
  'sub-01_ses-02_T1w',
  'Ünïcode Hirnstamm',
  'x',
  'Thalamus (left)',
  "O'Brien cortex",
];

const HOUR = 3_600_000;

function documentOf(brainId: number, random: () => number, now: number): BrainSearchDocument {
  const placed = random() < 0.9;
  const atlas = pick(random, ATLASES);
  const species = SPECIES[atlas[2] - 1]!;
  const text = syntheticText(random, brainId, placed ? species[1] : '');
  const visibility = pick(random, VISIBILITIES);
  const uploaderId = 1 + Math.floor(random() * 4);
  const category = pick(random, CATEGORIES);
  return {
    brainId,
    readableId: random() < 0.1 ? `sub-${brainId}_t1w` : `brain-${brainId}`,
    name: random() < 0.05 ? `${pick(random, EXTRA_NAMES)} ${brainId}` : text.name,
    description: text.description,
    speciesId: placed ? species[0] : null,
    speciesName: placed ? species[1] : null,
    scientificName: placed ? species[2] : null,
    atlasId: placed ? atlas[0] : null,
    atlasName: placed ? atlas[1] : null,
    categoryId: category[0],
    categoryName: category[1],
    verified: random() < 0.4,
    uploaderId,
    // Some share a moment: ties are broken by rank, similarity, then id.
    dateUploaded: new Date(Date.UTC(2024, 0, 1) + Math.floor(brainId / 3) * 60_000),
    visibility,
    embargoUntil: visibility === 'embargoed' ? new Date(now + (random() < 0.5 ? -HOUR : HOUR)) : null,
    readers: [uploaderId, ...(random() < 0.3 ? [1 + Math.floor(random() * 4)] : [])],
  };
}

const FACETS: readonly SearchFacet[] = ['species', 'atlas', 'category', 'verified'];
const VIEWERS: readonly (Viewer | undefined)[] = [
  undefined,
  { userId: null, isStaff: false },
  { userId: 2, isStaff: false },
  { userId: 3, isStaff: true },
];

function filtersOf(random: () => number): SearchFilters {
  const filters: Record<string, unknown> = { viewer: pick(random, VIEWERS) };
  if (random() < 0.2) filters.speciesIds = [pick(random, SPECIES)[0]];
  if (random() < 0.1) filters.atlasIds = [pick(random, ATLASES)[0], pick(random, ATLASES)[0]];
  if (random() < 0.1) filters.categoryIds = [pick(random, CATEGORIES)[0]];
  if (random() < 0.15) filters.verified = random() < 0.5;
  if (random() < 0.1) filters.uploaderId = 1 + Math.floor(random() * 4);
  if (random() < 0.1) filters.visibility = pick(random, ['public', 'private', 'embargoed'] as const);
  return filters;
}

function queryOf(text: string, random: () => number): SearchQuery {
  const sort: SearchSort[] | undefined =
    random() < 0.1
      ? [{ field: random() < 0.5 ? 'date_uploaded' : 'id', descending: random() < 0.5 }]
      : undefined;
  return {
    text,
    filters: filtersOf(random),
    limit: random() < 0.2 ? 1000 : 20,
    offset: random() < 0.2 ? Math.floor(random() * 60) : 0,
    ...(sort ? { sort } : {}),
    ...(random() < 0.5 ? { facets: FACETS } : {}),
  };
}

let pool: pg.Pool;
let tables: SearchIndex;
let memory: MemorySearchIndex;
const name = `search_${randomBytes(5).toString('hex')}`;
let position = 0n;
const now = Date.now();

async function write(
  documents: readonly BrainSearchDocument[],
  removed: readonly number[] = [],
): Promise<void> {
  await tables.upsert(
    documents.map((document) => ({ document, position: { commit: ++position, prepare: 0n } })),
  );
  await tables.remove(removed.map((brainId) => ({ brainId, position: { commit: ++position, prepare: 0n } })));
  await pool.query(
    `UPDATE ${READ_MODEL_SCHEMA}.projection_checkpoints SET commit_position = $2 WHERE projection = $1`,
    [name, position.toString()],
  );
}

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await createTestDatabase('search_memory_eq'), max: 4 });
  await migrateCheckpoints(pool);
  tables = createPostgresSearchIndex({ pool, name });
  await tables.install();
  await pool.query(
    `INSERT INTO ${READ_MODEL_SCHEMA}.projection_checkpoints (projection, version, status, commit_position, prepare_position)
     VALUES ($1, 1, 'live', 0, 0)`,
    [name],
  );
  const random = generator(7);
  await write(Array.from({ length: 3000 }, (_, i) => documentOf(i + 1, random, now)));
  memory = new MemorySearchIndex({
    pool,
    fallback: tables,
    logger: createSilentLogger(),
    projection: name,
    documentsView: `public."${name}"`,
    wordsView: `public."${name}_words"`,
    compactAfterDead: 100,
  });
  await memory.loaded();
}, 120_000);

afterAll(async () => {
  memory?.close();
  await pool?.end();
});

/** Texts of every kind: the bench's vocabulary and the cases it does not draw. */
function texts(): string[] {
  return [
    ...searchVocabulary(3000, 250),
    ...[
      '42',
      '2999',
      '0042',
      'brain-17',
      'BRAIN-17',
      'sub-30_t1w',
      'sub-3',
      'x',
      'ca',
      'Ca1/ca3',
      'ca1 / ca3',
    ],
    ...['hippocampus', 'Hippocampus', 'hipocampus', 'hippo', 'somatosensory cortex', 'cortex, Mouse'],
    ...['thalamus (left)', "o'brien", 'ünïcode', 'hirnstamm', 'mus musculus', 'homo', 'T1-weighted', 'µm'],
    ...['nissl', 'visual hippocampus', 'vis hip', 'entorhinal', 'corpus callosum 12', 'zzzz', '%', '_'],
  ];
}

async function compareAll(seed: number): Promise<number> {
  const random = generator(seed);
  let compared = 0;
  for (const text of texts()) {
    for (let round = 0; round < 2; round++) {
      const query = queryOf(text, random);
      const [expected, actual] = await Promise.all([tables.query(query), memory.query(query)]);
      expect({ query, result: actual }).toEqual({ query, result: expected });
      compared++;
    }
  }
  return compared;
}

test('answers exactly as the PostgreSQL statement, from memory', async () => {
  const before = memory.stats();
  const compared = await compareAll(11);
  const after = memory.stats();
  expect(compared).toBeGreaterThan(500);
  // Nearly every one from memory: PostgreSQL parses a few texts into other queries (hyphens).
  expect(after.inMemory - before.inMemory).toBeGreaterThan(compared * 0.8);
}, 300_000);

test('catches up with updates, removals and new brains before answering, and compacts', async () => {
  const random = generator(99);
  const updated = Array.from({ length: 400 }, () => documentOf(1 + Math.floor(random() * 3000), random, now));
  const added = Array.from({ length: 300 }, (_, i) => documentOf(3001 + i, random, now));
  const removed = Array.from({ length: 200 }, () => 1 + Math.floor(random() * 3300));
  await write([...updated, ...added], removed);
  const before = memory.stats();
  await compareAll(12);
  expect(memory.stats().inMemory).toBeGreaterThan(before.inMemory);
  expect(memory.stats().compactions).toBeGreaterThan(0);
}, 300_000);
