/**
 * The ledger's head as its read model holds it (the newest chained event), and the lag of
 * the ledger behind the PostgreSQL event store. Read by the ledger route, the head log and the
 * ledger metrics; a store or ledger that does not exist yet reads as empty.
 */
import type { Pool, PoolClient } from 'pg';
import { SQLSTATE, sqlState } from '#shared/infra/postgres/sqlState';
import { DEFAULT_SCHEMA, sqlNames } from '#shared/eventStore/postgres/sqlNames';
import { GENESIS_HASH } from './ledgerChain';

export type Queryable = Pick<Pool | PoolClient, 'query'>;

export interface LedgerHead {
  /** Events chained: the newest row's seq (0 when the ledger is empty). */
  readonly count: number;
  /** The newest chained event's position ("commit.prepare"), null when empty. */
  readonly position: string | null;
  /** The chain's hash after that event (GENESIS_HASH when empty). */
  readonly hash: Buffer;
}

export const EMPTY_LEDGER: LedgerHead = { count: 0, position: null, hash: GENESIS_HASH };

/** A relation that is not there yet (no projection installed, no run recorded): read as empty. */
export const isAbsentRelation = (error: unknown): boolean => {
  const state = sqlState(error);
  return state === SQLSTATE.undefinedTable || state === SQLSTATE.invalidSchemaName;
};

export async function readLedgerHead(db: Queryable): Promise<LedgerHead> {
  try {
    const { rows } = await db.query<{
      seq: string;
      commit_position: string;
      prepare_position: string;
      hash: Buffer;
    }>('SELECT seq, commit_position, prepare_position, hash FROM ledger ORDER BY seq DESC LIMIT 1');
    const row = rows[0];
    if (!row) return EMPTY_LEDGER;
    return {
      count: Number(row.seq),
      position: `${row.commit_position}.${row.prepare_position}`,
      hash: row.hash,
    };
  } catch (error) {
    if (isAbsentRelation(error)) return EMPTY_LEDGER;
    throw error;
  }
}

/** At most this many events are counted as lag (an index range scan): an alert needs no more. */
export const MAX_COUNTED_LAG = 10_000_000;

/**
 * Events of the PostgreSQL store that readers can see and the ledger has not chained yet; undefined
 * when the store is not in this database (EventStoreDB).
 */
export async function ledgerLagEvents(db: Queryable, head: LedgerHead): Promise<number | undefined> {
  const [commit, prepare] = head.position?.split('.') ?? ['0', '-1'];
  try {
    const { rows } = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM (
         SELECT 1 FROM ${sqlNames(DEFAULT_SCHEMA).events}
          WHERE transaction_id < pg_snapshot_xmin(pg_current_snapshot())
            AND (transaction_id, global_position) > ($1::xid8, $2::bigint)
          LIMIT ${MAX_COUNTED_LAG}) AS unchained`,
      [commit, prepare],
    );
    return Number(rows[0]?.n ?? 0);
  } catch (error) {
    if (isAbsentRelation(error)) return undefined;
    throw error;
  }
}
