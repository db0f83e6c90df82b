import { AsyncLocalStorage } from 'node:async_hooks';
import type pg from 'pg';
import { UnitOfWorkConflictError, type UnitOfWork } from '../eventStore';
import type { SqlExecutor } from './sqlExecutor';

interface Transaction {
  readonly client: pg.PoolClient;
  /** False from the moment the work settles: a task it left running must not use the client. */
  open: boolean;
}

/** deadlock_detected, serialization_failure: PostgreSQL's own "run it again". */
const RETRYABLE_CODES = new Set(['40P01', '40001']);

function retryable(error: unknown): error is Error & { code: string } {
  return error instanceof Error && 'code' in error && RETRYABLE_CODES.has(String(error.code));
}

/**
 * The ambient transaction of the PostgreSQL event store. AsyncLocalStorage carries it through
 * every await of the work, so command handlers need no transaction parameter: they call the store
 * as always, and `executor()` routes their appends and stream reads to the open transaction.
 */
export class PostgresUnitOfWork implements UnitOfWork {
  private readonly ambient = new AsyncLocalStorage<Transaction>();

  constructor(private readonly pool: pg.Pool) {}

  /** The active transaction's client inside `run`, else the pool. */
  executor(): SqlExecutor {
    const transaction = this.ambient.getStore();
    return transaction?.open ? transaction.client : this.pool;
  }

  inTransaction(): boolean {
    return this.ambient.getStore()?.open === true;
  }

  async run<T>(work: (sql: SqlExecutor) => Promise<T>): Promise<T> {
    const current = this.ambient.getStore();
    if (current?.open) return work(current.client);
    const client = await this.pool.connect();
    const transaction: Transaction = { client, open: true };
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await this.ambient
        .run(transaction, () => work(client))
        .finally(() => {
          transaction.open = false;
        });
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      if (retryable(error)) throw new UnitOfWorkConflictError(error.message, { cause: error });
      throw error;
    } finally {
      transaction.open = false;
      // A client whose ROLLBACK failed may be mid-transaction or disconnected: discard it.
      client.release(broken);
    }
  }
}
