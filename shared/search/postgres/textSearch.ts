import type { Pool, QueryResultRow } from 'pg';
import type { SearchQuery } from '../searchIndex';
import type { SearchText } from '../searchText';
import { SQLSTATE, sqlState } from '../../infra/postgres/sqlState';
import { searchSql, searchSqlV2, type SearchSources, type SqlStatement } from './searchQuerySql';

export type TextSearch = <Row extends QueryResultRow>(
  query: SearchQuery,
  search: SearchText,
) => Promise<Row[]>;

/** What PostgreSQL says when a statement names a column or a relation the views do not have. */
const isLayoutError = (error: unknown): boolean => {
  const code = sqlState(error);
  return code === SQLSTATE.undefinedColumn || code === SQLSTATE.undefinedTable;
};

/**
 * Text search whatever layout the live generation has. After an upgrade, v3 is rebuilt beside the
 * live v2 generation, which the views keep pointing at until the swap; until then the v3
 * statement cannot even be parsed. This process remembers which layout it last saw (starting
 * with v3, the steady state, where a search costs nothing more): a v3 statement refused for an
 * unknown column or relation sends the v2 statement instead, whose answer says whether the
 * views are v3 by now, so the first search after a swap (made by any process) returns to v3.
 * Each process asks the database itself: several query APIs need no coordination.
 */
export function createTextSearch(pool: Pool, sources: SearchSources): TextSearch {
  let v3Live = true;
  const rowsOf = async <Row extends QueryResultRow>(statement: SqlStatement): Promise<Row[]> =>
    (await pool.query<Row>(statement)).rows;
  return async <Row extends QueryResultRow>(query: SearchQuery, search: SearchText): Promise<Row[]> => {
    let refused = false;
    if (v3Live) {
      try {
        return await rowsOf<Row>(searchSql(query, search, sources));
      } catch (error) {
        if (!isLayoutError(error)) throw error;
        refused = true;
      }
    }
    const rows = await rowsOf<Row & { v3_live?: boolean }>(searchSqlV2(query, search, sources));
    v3Live = rows[0]?.v3_live === true;
    // Refused, yet the views are v3: they were swapped between the two statements, or the v3
    // statement itself is wrong. Its second answer (rows or error) is the one to give.
    return v3Live && refused ? rowsOf<Row>(searchSql(query, search, sources)) : rows;
  };
}
