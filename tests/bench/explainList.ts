import type pg from 'pg';
import { SqlConditions } from '#shared/query/sqlConditions';
import {
  type BrainListFilter,
  countBrains,
  fetchBrainPage,
} from '#services/query-api/features/brains/brainSql';
import { printDetail } from './report';

const NEWEST_FIRST = 'b.date_uploaded DESC, b.id DESC';
const PAGE = 20;

/**
 * BENCH_EXPLAIN=1: EXPLAIN (ANALYZE, BUFFERS) of the SQL the brains list runs (brainSql's own
 * functions, through a pool that explains instead of answering) on the generated catalogue:
 * the kept counts, the count an uploader filter falls back to, and the middle and last pages
 * with and without a species filter.
 */
export async function explainBrainList(pool: pg.Pool): Promise<void> {
  const explaining = explainingPool(pool);
  const where = (build: (c: SqlConditions) => void, countable: boolean): BrainListFilter => {
    const conditions = new SqlConditions();
    build(conditions);
    return { conditions, placementWhere: countable ? conditions.whereSql : undefined };
  };
  const species = where((c) => c.where(`b.species_id = ${c.param(1)}`), true);
  const speciesVerified = where((c) => {
    c.where(`b.species_id = ${c.param(1)}`).where(`b.verified = ${c.param(true)}`);
  }, true);
  const uploader = where((c) => c.where(`b.uploader_id = ${c.param(7)}`), false);
  const none = where(() => undefined, true);
  await show('count, species filter (brain_counts)', () => countBrains(explaining, species));
  await show('count, species + verified (brain_counts)', () => countBrains(explaining, speciesVerified));
  await show('count, uploader filter (indexed count)', () => countBrains(explaining, uploader));
  await show('count, no filter (brain_counts)', () => countBrains(explaining, none));
  for (const [name, filter] of [
    ['species filter', species],
    ['no filter', none],
  ] as const) {
    const total = await countBrains(pool, filter);
    const middle = PAGE * Math.floor(total / 2 / PAGE);
    const last = PAGE * Math.floor((total - 1) / PAGE);
    await show(`page, ${name}, middle page (OFFSET ${middle} of ${total}: the longest walk)`, () =>
      fetchBrainPage(explaining, filter, NEWEST_FIRST, { limit: PAGE, offset: middle }, total),
    );
    await show(`page, ${name}, last page (OFFSET ${last}: read from the other end)`, () =>
      fetchBrainPage(explaining, filter, NEWEST_FIRST, { limit: PAGE, offset: last }, total),
    );
  }
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
