import type { Pool } from 'pg';
import type { ListSource } from './listResponse';
import type { SqlConditions } from './sqlConditions';

export interface SqlListQuery {
  /** `SELECT … FROM …` of the rows of a page (before WHERE). */
  readonly select: string;
  /** `FROM …` the count runs over: the same rows, without the columns. */
  readonly from: string;
  readonly conditions: SqlConditions;
  /** An ORDER BY list from orderBy (allow-listed columns only). */
  readonly order: string;
}

/** A list endpoint's count and pages from one SQL query shape, every value a bind parameter. */
export function sqlListSource<Row extends object, Item>(
  db: Pick<Pool, 'query'>,
  query: SqlListQuery,
  toItem: (row: Row) => Item,
): ListSource<Item> {
  const { select, from, conditions, order } = query;
  return {
    async count() {
      const { rows } = await db.query<{ n: string }>(
        `SELECT count(*) AS n ${from} ${conditions.whereSql}`,
        conditions.params(),
      );
      return Number(rows[0]?.n ?? 0);
    },
    async fetch({ limit, offset }) {
      const { rows } = await db.query<Row>(
        `${select} ${conditions.whereSql} ORDER BY ${order} LIMIT ${conditions.extra(0)} OFFSET ${conditions.extra(1)}`,
        conditions.params(limit, offset),
      );
      return rows.map(toItem);
    },
  };
}
