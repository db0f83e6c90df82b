import type pg from 'pg';
import { SqlConditions } from '../../shared/query/sqlConditions';
import {
  type BrainListFilter,
  countBrains,
  fetchBrainPage,
} from '../../services/query-api/features/brains/brainSql';
import { printDetail } from './report';

const NEWEST_FIRST = 'b.date_uploaded DESC, b.id DESC';

/**
 * BENCH_EXPLAIN=1: EXPLAIN (ANALYZE, BUFFERS) of the SQL the brains list runs (brainSql's own
 * functions, through a pool that explains instead of answering) on the generated catalogue:
 * the kept count and a deep page under a species filter, the count an uploader filter falls back
 * to, and the deepest unfiltered page.
 */
export async function explainBrainList(pool: pg.Pool, brains: number): Promise<void> {
  const explaining = explainingPool(pool);
  const where = (build: (c: SqlConditions) => void, countable: boolean): BrainListFilter => {
    const conditions = new SqlConditions();
    build(conditions);
    return { conditions, countable };
  };
  const species = where((c) => c.where(`b.species_id = ${c.param(1)}`), true);
  const speciesVerified = where((c) => {
    c.where(`b.species_id = ${c.param(1)}`).where(`b.verified = ${c.param(true)}`);
  }, true);
  const uploader = where((c) => c.where(`b.uploader_id = ${c.param(7)}`), false);
  const none = where(() => undefined, true);
  const deep = Math.max(0, Math.floor(brains / 10) - 20); // about the last page of one species
  await show('count, species filter (brain_counts)', () => countBrains(explaining, species));
  await show('count, species + verified (brain_counts)', () => countBrains(explaining, speciesVerified));
  await show('count, uploader filter (indexed count)', () => countBrains(explaining, uploader));
  await show('count, no filter (brain_counts)', () => countBrains(explaining, none));
  await show(`page, species filter, OFFSET ${deep}`, () =>
    fetchBrainPage(explaining, species, NEWEST_FIRST, { limit: 20, offset: deep }),
  );
  await show(`page, no filter, OFFSET ${brains - 20}`, () =>
    fetchBrainPage(explaining, none, NEWEST_FIRST, { limit: 20, offset: brains - 20 }),
  );
}

let plan: string[] = [];

async function show(title: string, run: () => Promise<unknown>): Promise<void> {
  plan = [];
  await run();
  printDetail(`EXPLAIN ANALYZE: ${title}`);
  for (const line of plan) printDetail(`  ${line}`);
}

/** Stands in for the pool: runs each statement under EXPLAIN (unnamed) and keeps the plan; answers no rows. */
function explainingPool(pool: pg.Pool): pg.Pool {
  const query = async ({ text, values }: pg.QueryConfig) => {
    const { rows } = await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, values);
    plan = rows.map((row) => row['QUERY PLAN']);
    return { rows: [] };
  };
  return { query } as unknown as pg.Pool;
}
