import { AsyncLocalStorage } from 'node:async_hooks';
import type pg from 'pg';
import {
  UnitOfWorkConflictError,
  type UnitOfWork,
  type UnitOfWorkHooks,
} from '#shared/eventStore/eventStore';
import type { SqlExecutor } from './sqlExecutor';

/** One run's transaction, begun at its first statement. */
class Transaction {
  /** False once the work has settled: a task it left running must not use the connection. */
  open = true;
  readonly committed: (() => Promise<void>)[] = [];
  readonly rolledBack: (() => Promise<void>)[] = [];
  client: pg.PoolClient | undefined;
  begun: Promise<pg.PoolClient> | undefined;
  beginError: { error: unknown } | undefined;
  readonly sql: SqlExecutor = {
    query: <Row extends pg.QueryResultRow>(config: pg.QueryConfig) =>
      this.begin().then((client) => client.query<Row>(config)),
  };

  constructor(
    private readonly pool: pg.Pool,
    private readonly hooks: UnitOfWorkHooks,
  ) {}

  begin(): Promise<pg.PoolClient> {
    if (!this.open) return Promise.reject(new Error('the unit of work has ended'));
    this.begun ??= this.connect().catch((error: unknown) => {
      this.beginError = { error };
      throw error;
    });
    return this.begun;
  }

  /**
   * The first error the connection reported between statements: the pool does not listen to a
   * checked-out client, and an 'error' event nobody hears would end the process. The client is
   * then discarded when given back.
   */
  lostWith: Error | undefined;
  readonly onConnectionError = (error: Error): void => {
    this.lostWith ??= error;
  };

  private async connect(): Promise<pg.PoolClient> {
    this.client = await this.pool.connect();
    this.client.on('error', this.onConnectionError);
    await this.client.query('BEGIN');
    await this.hooks.onBegin?.(this.client);
    return this.client;
  }
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

  /** The active transaction inside `run`, else the pool. */
  executor(): SqlExecutor {
    const transaction = this.ambient.getStore();
    return transaction?.open ? transaction.sql : this.pool;
  }

  isActive(): boolean {
    return this.ambient.getStore()?.open === true;
  }

  read<T>(work: (sql: SqlExecutor) => Promise<T>): Promise<T> {
    return work(this.executor());
  }

  async afterCommit(effect: () => Promise<void>): Promise<void> {
    const transaction = this.ambient.getStore();
    if (transaction?.open) transaction.committed.push(effect);
    else await effect();
  }

  afterRollback(effect: () => Promise<void>): void {
    const transaction = this.ambient.getStore();
    if (transaction?.open) transaction.rolledBack.push(effect);
  }

  async run<T>(work: (sql: SqlExecutor) => Promise<T>, hooks: UnitOfWorkHooks = {}): Promise<T> {
    const current = this.ambient.getStore();
    if (current?.open) return work(current.sql);
    const transaction = new Transaction(this.pool, hooks);
    let broken: Error | undefined;
    try {
      const result = await this.ambient
        .run(transaction, () => work(transaction.sql))
        .finally(() => (transaction.open = false));
      if (transaction.begun) await (await transaction.begun).query('COMMIT');
      // Effects of a committed run cannot undo it: each runs, and a failure is the effect's own.
      for (const effect of transaction.committed) await effect().catch(() => undefined);
      return result;
    } catch (error) {
      await transaction.client?.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      for (const effect of transaction.rolledBack) await effect().catch(() => undefined);
      // The hook's verdict wins over what the work made of it (it may have wrapped or replaced it).
      const cause = transaction.beginError ? transaction.beginError.error : error;
      if (retryable(cause)) throw new UnitOfWorkConflictError(cause.message, { cause });
      throw cause;
    } finally {
      transaction.open = false;
      // A client whose ROLLBACK failed may be mid-transaction or disconnected: discard it.
      transaction.client?.off('error', transaction.onConnectionError);
      transaction.client?.release(broken ?? transaction.lostWith);
    }
  }
}
