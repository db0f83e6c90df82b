/**
 * Search benchmark (not run by the tests): loads generated brains into the PostgreSQL SearchIndex
 * on a throw-away embedded PostgreSQL, then prints p50/p99 latencies per kind of query.
 * Run: npx tsx tests/bench/searchBench.ts [documents=100000] [queries per kind=300]
 */
import pg from 'pg';
import { createPostgresSearchIndex } from '../../shared/search/postgres/postgresSearchIndex';
import type { BrainSearchDocument, SearchIndex, SearchQuery } from '../../shared/search/searchIndex';
import { startBenchPostgres } from './benchPostgres';
import { Cleanup } from './cleanup';
import { percentile } from './stats';

const REGIONS = [
  'hippocampus',
  'cortex',
  'cerebellum',
  'striatum',
  'thalamus',
  'amygdala',
  'olfactory bulb',
  'brainstem',
  'hypothalamus',
  'corpus callosum',
  'retina',
  'spinal cord',
];
const QUALIFIERS = [
  'visual',
  'motor',
  'dorsal',
  'ventral',
  'adult',
  'juvenile',
  'left',
  'right',
  'whole',
  'partial',
];
const SPECIES = ['Mouse', 'Rat', 'Human', 'Macaque', 'Marmoset', 'Zebrafish', 'Ferret', 'Pig'];
const BATCH = 2000;

/** Deterministic, so two runs load the same catalogue. */
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

function document(brainId: number, random: () => number): BrainSearchDocument {
  const species = Math.floor(random() * SPECIES.length);
  const region = pick(random, REGIONS);
  return {
    brainId,
    readableId: `${region.replace(' ', '-')}-${brainId}`,
    name: `${pick(random, QUALIFIERS)} ${region} ${brainId}`,
    description: `${pick(random, QUALIFIERS)} section of the ${pick(random, REGIONS)}, stained and imaged`,
    speciesId: species + 1,
    speciesName: SPECIES[species]!,
    scientificName: `Genus ${species}`,
    atlasId: random() < 0.2 ? null : 1 + Math.floor(random() * 40),
    atlasName: 'Atlas',
    categoryId: 1 + Math.floor(random() * 12),
    categoryName: 'Category',
    verified: random() < 0.3,
    uploaderId: 1 + Math.floor(random() * 500),
    dateUploaded: new Date(Date.UTC(2015, 0, 1) + brainId * 60_000),
  };
}

/** A word of a name, sometimes with one letter dropped (a typo). */
function searchText(random: () => number): string {
  const word = pick(random, REGIONS).split(' ')[0]!;
  if (random() < 0.3) {
    const at = 1 + Math.floor(random() * (word.length - 2));
    return word.slice(0, at) + word.slice(at + 1);
  }
  return word;
}

const KINDS: Readonly<Record<string, (random: () => number) => SearchQuery>> = {
  'text (30% with a typo)': (random) => ({ text: searchText(random), limit: 20, offset: 0 }),
  'filters (species + verified, newest first)': (random) => ({
    filters: { speciesIds: [1 + Math.floor(random() * SPECIES.length)], verified: random() < 0.5 },
    limit: 20,
    offset: 20 * Math.floor(random() * 10),
  }),
  'facets x4 under a category filter': (random) => ({
    filters: { categoryIds: [1 + Math.floor(random() * 12)] },
    limit: 20,
    offset: 0,
    facets: ['species', 'atlas', 'category', 'verified'],
  }),
  'facets x4 under text + filter': (random) => ({
    text: searchText(random),
    filters: { verified: true },
    limit: 20,
    offset: 0,
    facets: ['species', 'atlas', 'category', 'verified'],
  }),
  'unfiltered page + facets x4 (kept counts)': (random) => ({
    limit: 20,
    offset: 20 * Math.floor(random() * 10),
    facets: ['species', 'atlas', 'category', 'verified'],
  }),
};

async function load(index: SearchIndex, documents: number): Promise<number> {
  const random = generator(7);
  const started = performance.now();
  const rebuild = await index.beginRebuild();
  for (let first = 1; first <= documents; first += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, documents - first + 1) }, (_, i) => first + i);
    await rebuild.upsert(
      batch.map((id) => ({ document: document(id, random), position: { commit: BigInt(id), prepare: 0n } })),
    );
  }
  await rebuild.finish();
  return performance.now() - started;
}

async function main(): Promise<void> {
  const documents = Number(process.argv[2] ?? 100_000);
  const perKind = Number(process.argv[3] ?? 300);
  const cleanup = new Cleanup();
  cleanup.onSignals();
  try {
    const postgres = await startBenchPostgres(cleanup);
    const pool = new pg.Pool({ connectionString: await postgres.createDatabase('search_bench'), max: 2 });
    cleanup.defer('pool', () => pool.end());
    const index = createPostgresSearchIndex({ pool });
    await index.install();
    const loadMs = await load(index, documents);
    console.log(
      `${postgres.version}; ${documents} documents loaded (rebuild + indexes + swap) in ${(loadMs / 1000).toFixed(1)} s`,
    );
    const random = generator(11);
    for (const [kind, make] of Object.entries(KINDS)) {
      for (let i = 0; i < 20; i++) await index.query(make(random)); // warm-up
      const timings: number[] = [];
      let matched = 0;
      for (let i = 0; i < perKind; i++) {
        const started = performance.now();
        const result = await index.query(make(random));
        timings.push(performance.now() - started);
        matched += result.total;
      }
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
