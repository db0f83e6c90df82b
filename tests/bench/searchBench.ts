/**
 * Search benchmark (not run by the tests): loads generated brains into the PostgreSQL SearchIndex
 * on a throw-away embedded PostgreSQL, then prints p50/p99 latencies per kind of query.
 * The documents are those of the HTTP benchmark's generated catalogue (catalogueEvents.ts).
 * Run: npx tsx tests/bench/searchBench.ts [documents=100000] [queries per kind=300]
 * (SEARCH_BENCH_ONLY=bench runs only the kinds whose name contains "bench").
 * SEARCH_BENCH_DIR=<dir> keeps the cluster there: a later run with as many documents reuses them
 * instead of loading them again (a million take minutes).
 * SEARCH_BENCH_MEMORY=1 asks the in-memory index (shared/search/memory) over the same tables, as a
 * query API does by default, and prints its load time and memory.
 */
import pg from 'pg';
import { createPostgresSearchIndex } from '#shared/search/postgres/postgresSearchIndex';
import type { BrainSearchDocument, SearchIndex, SearchQuery, SearchReader } from '#shared/search/searchIndex';
import { MemorySearchIndex } from '#shared/search/memory/memorySearchIndex';
import { createSilentLogger } from '#shared/logging/logger';
import { migrateCheckpoints } from '#shared/projections/checkpointStore';
import { READ_MODEL_SCHEMA } from '#shared/projections/projection';
import type { BrainCreated } from '#shared/domain/brains/events';
import { startEmbeddedPostgres } from '#shared/infra/postgres/embeddedPostgres';
import { startBenchPostgres } from './benchPostgres';
import { brainAppends, CATEGORIES, SEARCH_WORD, SPECIES } from './catalogueEvents';
import { Cleanup } from './cleanup';
import { percentile } from './stats';
import { searchVocabulary } from './searchVocabulary';

const BATCH = 2000;
const PAGE_SIZE = 20;
const FACETS = ['species', 'atlas', 'category', 'verified'] as const;
const REGIONS = ['hippocampus', 'cortex', 'cerebellum', 'striatum', 'thalamus', 'amygdala', 'brainstem'];

/** Deterministic, so two runs draw the same queries. */
function generator(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

function pick<T>(random: () => number, values: readonly T[]): T {
  return values[Math.floor(random() * values.length)]!;
}

/**
 * The documents the search projection writes for brains `first`..`last` of the HTTP benchmark's
 * catalogue (catalogueEvents.ts), so the figures here are those of the same data.
 */
function documents(first: number, last: number): BrainSearchDocument[] {
  return brainAppends(first, last).flatMap(({ events }) =>
    events.flatMap((event): BrainSearchDocument[] => {
      if (event.type !== 'BrainCreated') return [];
      const d = event.data as BrainCreated['data'];
      const species = d.speciesId === null ? undefined : SPECIES[d.speciesId - 1];
      return [
        {
          brainId: d.brainId,
          readableId: d.readableId,
          name: d.name,
          description: d.description,
          speciesId: d.speciesId,
          speciesName: species?.[1] ?? null,
          scientificName: species?.[0] ?? null,
          atlasId: d.atlasId,
          atlasName: d.atlasId === null ? null : `Reference atlas ${d.atlasId}`,
          categoryId: d.categoryId,
          categoryName: CATEGORIES[d.categoryId - 1]!,
          verified: d.verified,
          uploaderId: d.uploaderId,
          dateUploaded: new Date(d.createdAt),
          visibility: d.visibility ?? 'public',
          embargoUntil: d.embargoUntil ? new Date(d.embargoUntil) : null,
          readers: [d.uploaderId],
        },
      ];
    }),
  );
}

/** A word of a name, sometimes with one letter dropped (a typo). */
function searchText(random: () => number): string {
  const word = pick(random, REGIONS);
  if (random() < 0.3) {
    const at = 1 + Math.floor(random() * (word.length - 2));
    return word.slice(0, at) + word.slice(at + 1);
  }
  return word;
}

/** Per species id: its brains, and those matching SEARCH_WORD (the HTTP bench draws pages within them). */
interface Sizes {
  readonly brains: readonly number[];
  readonly matching: readonly number[];
}

const speciesIndex = (random: () => number): number => Math.floor(random() * SPECIES.length);
/** A random page's offset among `count` results, as listTargets.ts draws `page`. */
const randomOffset = (random: () => number, count: number): number =>
  PAGE_SIZE * Math.floor(random() * Math.max(1, Math.ceil(count / PAGE_SIZE)));

type Kind = (random: () => number, sizes: Sizes) => SearchQuery;

/**
 * The texts of issue 22's uncached search figures (searchVocabulary.ts), drawn in order so that no
 * text repeats within a kind (the vocabulary has 10,000; a kind asks for at most that many).
 */
let vocabulary: readonly string[] = [];
let drawn = 0;
const vocabularyText = (): string => vocabulary[drawn++ % vocabulary.length]!;

const KINDS: Readonly<Record<string, Kind>> = {
  'text (30% with a typo)': (random) => ({ text: searchText(random), limit: PAGE_SIZE, offset: 0 }),
  'filters (species + verified, newest first)': (random) => ({
    filters: { speciesIds: [1 + speciesIndex(random)], verified: random() < 0.5 },
    limit: PAGE_SIZE,
    offset: PAGE_SIZE * Math.floor(random() * 10),
  }),
  'facets x4 under a category filter': (random) => ({
    filters: { categoryIds: [1 + Math.floor(random() * CATEGORIES.length)] },
    limit: PAGE_SIZE,
    offset: 0,
    facets: FACETS,
  }),
  'facets x4 under text + filter': (random) => ({
    text: searchText(random),
    filters: { verified: true },
    limit: PAGE_SIZE,
    offset: 0,
    facets: FACETS,
  }),
  'unfiltered page + facets x4 (kept counts)': (random) => ({
    limit: PAGE_SIZE,
    offset: PAGE_SIZE * Math.floor(random() * 10),
    facets: FACETS,
  }),
  'vocabulary: text, first page': () => ({ text: vocabularyText(), limit: PAGE_SIZE, offset: 0 }),
  'vocabulary: text + species, first page': (random) => ({
    text: vocabularyText(),
    filters: { speciesIds: [1 + speciesIndex(random)] },
    limit: PAGE_SIZE,
    offset: 0,
  }),
  'vocabulary: text + facets x4, first page': () => ({
    text: vocabularyText(),
    limit: PAGE_SIZE,
    offset: 0,
    facets: FACETS,
  }),
  // The HTTP bench's two search queries (listTargets.ts): a species, a random page of its results.
  [`bench: species + search=${SEARCH_WORD}, random page`]: (random, sizes) => {
    const species = speciesIndex(random);
    return {
      text: SEARCH_WORD,
      filters: { speciesIds: [species + 1] },
      limit: PAGE_SIZE,
      offset: randomOffset(random, sizes.matching[species]!),
    };
  },
  'bench: species + facets x4, random page': (random, sizes) => {
    const species = speciesIndex(random);
    return {
      filters: { speciesIds: [species + 1] },
      limit: PAGE_SIZE,
      offset: randomOffset(random, sizes.brains[species]!),
      facets: FACETS,
    };
  },
};

async function load(index: SearchIndex, count: number): Promise<number> {
  const started = performance.now();
  const rebuild = await index.beginRebuild();
  for (let first = 1; first <= count; first += BATCH) {
    const batch = documents(first, Math.min(count, first + BATCH - 1));
    await rebuild.upsert(
      batch.map((document) => ({ document, position: { commit: BigInt(document.brainId), prepare: 0n } })),
    );
  }
  await rebuild.finish();
  return performance.now() - started;
}

/** The bench's database: a throw-away cluster, or the one kept in SEARCH_BENCH_DIR. */
async function benchDatabase(cleanup: Cleanup): Promise<{ url: string; version: string }> {
  const dir = process.env.SEARCH_BENCH_DIR;
  if (!dir) {
    const postgres = await startBenchPostgres(cleanup);
    return { url: await postgres.createDatabase('search_bench'), version: postgres.version };
  }
  const server = await startEmbeddedPostgres({ dataDir: dir, persistent: true });
  cleanup.defer('PostgreSQL', () => server.stop());
  const admin = new pg.Client({ connectionString: server.connectionString('postgres') });
  await admin.connect();
  try {
    const exists = await admin.query(`SELECT 1 FROM pg_database WHERE datname = 'search_bench'`);
    if (exists.rowCount === 0) await server.createDatabase('search_bench');
    const { rows } = await admin.query<{ server_version: string }>('SHOW server_version');
    return { url: server.connectionString('search_bench'), version: `PostgreSQL ${rows[0]?.server_version}` };
  } finally {
    await admin.end();
  }
}

async function sizesOf(index: SearchIndex): Promise<Sizes> {
  const total = async (query: Omit<SearchQuery, 'limit' | 'offset'>) =>
    (await index.query({ ...query, limit: 0, offset: 0 })).total;
  const species = SPECIES.map((_, i) => ({ speciesIds: [i + 1] }));
  return {
    brains: await Promise.all(species.map((filters) => total({ filters }))),
    matching: await Promise.all(species.map((filters) => total({ filters, text: SEARCH_WORD }))),
  };
}

/**
 * The information baseline of issue 22: the vocabulary's texts against a bare in-memory index of
 * the same names (an array scanned for the lowercased text, newest match first; no ranking, typos,
 * visibility or other fields), in this process.
 */
function inMemoryBaseline(count: number, perKind: number): void {
  const names: string[] = [];
  for (let first = 1; first <= count; first += BATCH)
    for (const document of documents(first, Math.min(count, first + BATCH - 1)))
      names[document.brainId] = document.name.toLowerCase();
  const timings: number[] = [];
  let matched = 0;
  for (let i = 0; i < perKind; i++) {
    const text = vocabulary[i % vocabulary.length]!.toLowerCase();
    const started = performance.now();
    const page: number[] = [];
    let total = 0;
    for (let id = names.length - 1; id > 0; id--)
      if (names[id]!.includes(text)) {
        total++;
        if (page.length < PAGE_SIZE) page.push(id);
      }
    timings.push(performance.now() - started);
    matched += total;
  }
  console.log(
    `in-memory baseline (array scan of ${count} names, same texts): p50 ${percentile(timings, 50).toFixed(1)} ms, p99 ${percentile(timings, 99).toFixed(1)} ms (${perKind} queries, mean total ${Math.round(matched / perKind)})`,
  );
}

/**
 * The in-memory index over the bench's tables, loaded: a checkpoint row stands for the search
 * projection's (the documents were written at positions up to the last brain id).
 */
async function memoryReader(pool: pg.Pool, index: SearchIndex, cleanup: Cleanup): Promise<SearchReader> {
  await migrateCheckpoints(pool);
  await pool.query(`DELETE FROM ${READ_MODEL_SCHEMA}.projection_checkpoints WHERE projection = 'search_bench'`);
  await pool.query(
    `INSERT INTO ${READ_MODEL_SCHEMA}.projection_checkpoints (projection, version, status, commit_position, prepare_position)
     SELECT 'search_bench', 1, 'live', coalesce(max(position_commit), 0), 0 FROM public.brain_search`,
  );
  const before = process.memoryUsage();
  const started = performance.now();
  const memory = new MemorySearchIndex({
    pool,
    fallback: index,
    logger: createSilentLogger(),
    projection: 'search_bench',
  });
  cleanup.defer('in-memory index', () => memory.close());
  await memory.loaded();
  const loadMs = performance.now() - started;
  global.gc?.();
  const after = process.memoryUsage();
  const mb = (bytes: number): string => (bytes / 2 ** 20).toFixed(0);
  console.log(
    `in-memory index: ${memory.size ?? 0} documents loaded in ${(loadMs / 1000).toFixed(1)} s; heap +${mb(after.heapUsed - before.heapUsed)} MB, RSS +${mb(after.rss - before.rss)} MB (RSS ${mb(after.rss)} MB)`,
  );
  return {
    async query(query, options) {
      const result = await memory.query(query, options);
      return result;
    },
  };
}

/** SEARCH_BENCH_ONLY=<words>: only the kinds whose name contains one of them. */
function selectedKinds(): [string, Kind][] {
  const only = process.env.SEARCH_BENCH_ONLY?.split(',').filter(Boolean);
  return Object.entries(KINDS).filter(([kind]) => !only || only.some((word) => kind.includes(word)));
}

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 100_000);
  const perKind = Number(process.argv[3] ?? 300);
  const cleanup = new Cleanup();
  cleanup.onSignals();
  try {
    const postgres = await benchDatabase(cleanup);
    const pool = new pg.Pool({ connectionString: postgres.url, max: 2 });
    pool.on('error', () => undefined); // an idle connection ended by the server's stop is not a failure
    cleanup.defer('pool', () => pool.end());
    const index = createPostgresSearchIndex({ pool });
    await index.install();
    if ((await index.query({ limit: 0, offset: 0 })).total === count)
      console.log(`${postgres.version}; ${count} documents kept from an earlier run`);
    else {
      const loadMs = await load(index, count);
      console.log(
        `${postgres.version}; ${count} documents loaded (rebuild + indexes + swap) in ${(loadMs / 1000).toFixed(1)} s`,
      );
    }
    const reader = process.env.SEARCH_BENCH_MEMORY === '1' ? await memoryReader(pool, index, cleanup) : index;
    const sizes = await sizesOf(index);
    vocabulary = searchVocabulary(count);
    if (selectedKinds().some(([kind]) => kind.startsWith('vocabulary'))) inMemoryBaseline(count, perKind);
    const random = generator(11);
    for (const [kind, make] of selectedKinds()) {
      for (let i = 0; i < 20; i++) await reader.query(make(random, sizes)); // warm-up
      const timings: number[] = [];
      const slowest: [ms: number, text: string, total: number][] = [];
      let matched = 0;
      for (let i = 0; i < perKind; i++) {
        const query = make(random, sizes);
        const started = performance.now();
        const result = await reader.query(query);
        const ms = performance.now() - started;
        timings.push(ms);
        slowest.push([ms, query.text ?? '', result.total]);
        matched += result.total;
      }
      // SEARCH_BENCH_SLOWEST=n: the n slowest texts of each kind, to see what the tail is made of.
      const show = Number(process.env.SEARCH_BENCH_SLOWEST ?? 0);
      for (const [ms, text, total] of slowest.sort((a, b) => b[0] - a[0]).slice(0, show))
        console.log(`  ${ms.toFixed(1)} ms  ${JSON.stringify(text)}  (${total} matches)`);
      const p50 = percentile(timings, 50).toFixed(1);
      const p99 = percentile(timings, 99).toFixed(1);
      console.log(
        `${kind}: p50 ${p50} ms, p99 ${p99} ms (${perKind} queries, mean total ${Math.round(matched / perKind)})`,
      );
    }
  } finally {
    await cleanup.run();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
