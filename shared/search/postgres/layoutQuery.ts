import type { Pool, QueryResultRow } from 'pg';
import { cancellableQuery } from '#shared/infra/postgres/cancellableQuery';
import { SQLSTATE, sqlState } from '#shared/infra/postgres/sqlState';
import type { SearchLayout, SqlStatement } from './searchQuerySql';

/** A query of the index: its statement for a layout. */
export type LayoutStatement = (layout: SearchLayout) => SqlStatement;

/**
 * Runs a query (text search or a list) with the statement of the live generation's layout; an
 * abort of `signal` cancels the statement (cancellableQuery).
 */
export type LayoutQuery = <Row extends QueryResultRow>(
  statement: LayoutStatement,
  signal?: AbortSignal,
) => Promise<Row[]>;

/** What PostgreSQL says when a statement names a column or a relation the views do not have. */
const isLayoutError = (error: unknown): boolean => {
  const code = sqlState(error);
  return code === SQLSTATE.undefinedColumn || code === SQLSTATE.undefinedTable;
};

/**
 * Queries whatever layout the live generation has. After an upgrade, v5 (the visibility columns)
 * is rebuilt beside the live v4 generation, which the views keep pointing at until the swap; until
 * then the v5 statement names columns the views do not have. This process remembers which layout
 * it last saw (starting with v5, the steady state, where a query costs nothing more): a v5
 * statement refused for an unknown column or relation sends the v4 statement instead, whose answer
 * says whether the views are v5 by now, so the first query after a swap (made by any process)
 * returns to v5. Each process asks the database itself: several query APIs need no coordination.
 * A v4 generation holds documents written before visibility existed, all public: its statement has
 * no rule (and a `private` or `embargoed` filter finds nothing there).
 * The v4 statement is kept until every deployment has swapped to v5: delete it with the next
 * layout change.
 */
export function createLayoutQuery(pool: Pool): LayoutQuery {
  let v5Live = true;
  return async <Row extends QueryResultRow>(
    statement: LayoutStatement,
    signal?: AbortSignal,
  ): Promise<Row[]> => {
    const rowsOf = async <R extends QueryResultRow>(sql: SqlStatement): Promise<R[]> =>
      (await cancellableQuery<R>(pool, sql, signal)).rows;
    let refused = false;
    if (v5Live) {
      try {
        return await rowsOf<Row>(statement(5));
      } catch (error) {
        if (!isLayoutError(error)) throw error;
        refused = true;
      }
    }
    const rows = await rowsOf<Row & { v5_live?: boolean }>(statement(4));
    v5Live = rows[0]?.v5_live === true;
    // Refused, yet the views are v5: they were swapped between the two statements, or the v5
    // statement itself is wrong. Its second answer (rows or error) is the one to give.
    return v5Live && refused ? rowsOf<Row>(statement(5)) : rows;
  };
}
