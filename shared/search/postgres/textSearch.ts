import type { Pool, QueryResultRow } from 'pg';
import type { SearchQuery } from '#shared/search/searchIndex';
import type { SearchText } from '#shared/search/searchText';
import { SQLSTATE, sqlState } from '#shared/infra/postgres/sqlState';
import { searchSql, type SearchSources, type SqlStatement } from './searchQuerySql';

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
 * Text search whatever layout the live generation has. After an upgrade, v4 is rebuilt beside the
 * live v3 generation, which the views keep pointing at until the swap; until then the v4
 * statement names a view that does not exist yet. This process remembers which layout it last saw
 * (starting with v4, the steady state, where a search costs nothing more): a v4 statement refused
 * for an unknown column or relation sends the v3 statement instead, whose answer says whether the
 * views are v4 by now, so the first search after a swap (made by any process) returns to v4.
 * Each process asks the database itself: several query APIs need no coordination.
 * The v3 statement is kept until every deployment has swapped to v4: delete it with the next
 * layout change.
 */
export function createTextSearch(pool: Pool, sources: SearchSources): TextSearch {
  let v4Live = true;
  const rowsOf = async <Row extends QueryResultRow>(statement: SqlStatement): Promise<Row[]> =>
    (await pool.query<Row>(statement)).rows;
  return async <Row extends QueryResultRow>(query: SearchQuery, search: SearchText): Promise<Row[]> => {
    let refused = false;
    if (v4Live) {
      try {
        return await rowsOf<Row>(searchSql(query, search, sources));
      } catch (error) {
        if (!isLayoutError(error)) throw error;
        refused = true;
      }
    }
    const rows = await rowsOf<Row & { v4_live?: boolean }>(searchSql(query, search, sources, 3));
    v4Live = rows[0]?.v4_live === true;
    // Refused, yet the views are v4: they were swapped between the two statements, or the v4
    // statement itself is wrong. Its second answer (rows or error) is the one to give.
    return v4Live && refused ? rowsOf<Row>(searchSql(query, search, sources)) : rows;
  };
}
