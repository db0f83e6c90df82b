import type pg from 'pg';

/** What the adapter needs from a pool or a client: a pool for normal use, a client inside a transaction. */
export interface SqlExecutor {
  query<Row extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<Row>>;
}
