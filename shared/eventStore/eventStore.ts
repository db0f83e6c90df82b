/**
 * The EventStore port. Two adapters implement it: PostgreSQL (shared/eventStore/postgres) and
 * EventStoreDB (shared/eventStore/eventStoreDb). Both pass tests/contract/eventStore.contract.ts.
 *
 * Guarantees (architecture.md): per-stream optimistic concurrency; idempotent append by event id;
 * one global order that a subscriber follows from a checkpoint with no event skipped or repeated,
 * even when transactions commit out of position order; metadata on every event; events are never
 * changed in place; a stream can be read up to a position or a time.
 */

import type { SqlExecutor } from './postgres/sqlExecutor';

/**
 * A place in the global order. Lexicographic on (commit, prepare).
 * PostgreSQL: commit = transaction id (xid8), prepare = global sequence number.
 * EventStoreDB: the native commit/prepare positions of $all.
 */
export interface GlobalPosition {
  readonly commit: bigint;
  readonly prepare: bigint;
}

export const START: GlobalPosition = Object.freeze({ commit: -1n, prepare: -1n });

export function comparePositions(a: GlobalPosition, b: GlobalPosition): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  if (a.prepare !== b.prepare) return a.prepare < b.prepare ? -1 : 1;
  return 0;
}

/** The earliest of some positions; START when there are none. */
export function minPosition(positions: readonly GlobalPosition[]): GlobalPosition {
  return (
    positions.reduce<GlobalPosition | undefined>(
      (min, p) => (min === undefined || comparePositions(p, min) < 0 ? p : min),
      undefined,
    ) ?? START
  );
}

/** "commit.prepare": used in checkpoints, response headers and the read-your-writes token. */
export function formatPosition(p: GlobalPosition): string {
  return `${p.commit}.${p.prepare}`;
}

export function parsePosition(text: string): GlobalPosition | undefined {
  const match = /^(-?\d{1,20})\.(-?\d{1,20})$/.exec(text.trim());
  if (!match) return undefined;
  return { commit: BigInt(match[1]!), prepare: BigInt(match[2]!) };
}

export interface EventMetadata {
  /** User id (as text) or 'system'. */
  readonly actor: string;
  readonly requestId: string | null;
  readonly correlationId: string;
  readonly causationId: string | null;
  readonly schemaVersion: number;
  /** ISO 8601 UTC; set by the store when the event is recorded. */
  readonly recordedAt: string;
}

export type EventMetadataInput = Omit<EventMetadata, 'recordedAt'>;

export interface NewEvent<Type extends string = string, Data = unknown> {
  /** UUID. Appending the same ids again writes nothing twice (idempotent retry). */
  readonly id: string;
  readonly type: Type;
  readonly data: Data;
  readonly metadata: EventMetadataInput;
}

export interface RecordedEvent<Type extends string = string, Data = unknown> {
  readonly id: string;
  readonly type: Type;
  readonly data: Data;
  readonly metadata: EventMetadata;
  readonly streamName: string;
  /** 0-based index of the event in its stream. */
  readonly streamRevision: bigint;
  readonly position: GlobalPosition;
}

/** 'any': no check. 'no_stream': the stream must not exist. bigint: revision of the stream's last event. */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | bigint;

export interface AppendResult {
  /** Revision of the stream's last event after the append. */
  readonly nextExpectedRevision: bigint;
  /** Position of the last appended event. */
  readonly position: GlobalPosition;
}

/** One stream's share of an atomic append to several streams (EventStore.appendToStreams). */
export interface StreamAppend {
  readonly streamName: string;
  readonly events: readonly NewEvent[];
  /** Default 'any'. */
  readonly expectedRevision?: ExpectedRevision;
}

export interface ReadStreamOptions {
  readonly fromRevision?: bigint;
  /** Inclusive upper bound on the stream revision. */
  readonly toRevision?: bigint;
  /** Only events at or before this global position ("as of" reads). */
  readonly toPosition?: GlobalPosition;
  /** Only events recorded at or before this time. */
  readonly toTime?: Date;
  readonly maxCount?: number;
}

export interface ReadAllOptions {
  /** Exclusive: events strictly after this position. START reads from the beginning. */
  readonly after?: GlobalPosition;
  readonly maxCount?: number;
}

export interface SubscribeOptions {
  readonly after?: GlobalPosition;
  /** Events are delivered in batches of at most this many (catch-up reads). */
  readonly batchSize?: number;
  readonly signal?: AbortSignal;
}

export interface EventStore {
  appendToStream(
    streamName: string,
    events: readonly NewEvent[],
    options?: { expectedRevision?: ExpectedRevision },
  ): Promise<AppendResult>;
  /** Events of one stream in revision order; [] when the stream does not exist. */
  readStream(streamName: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /** One page of the global order. Only returns events that can no longer be preceded by others. */
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /**
   * Catch-up then live subscription to the global order, as batches. Consume with `for await`;
   * ends when the signal aborts. Every event after `after` is delivered exactly once, in order.
   */
  subscribeToAll(options?: SubscribeOptions): AsyncIterable<readonly RecordedEvent[]>;
  /** The position of the latest event that readAll can return (START when empty). */
  headPosition(): Promise<GlobalPosition>;
  /**
   * The position of the latest committed event, whether or not readAll returns it yet (PostgreSQL
   * holds an event back while a transaction that could precede it is open anywhere on the server):
   * what "everything appended so far" ends at. Absent where the two are the same (EventStoreDB).
   */
  newestPosition?(): Promise<GlobalPosition>;
  close(): Promise<void>;
  /** Present only where the store can make several writes atomic (PostgreSQL; not EventStoreDB). */
  readonly unitOfWork?: UnitOfWork;
  /**
   * Present only where the store can append to several streams atomically (PostgreSQL; not
   * EventStoreDB): all of them or none, in one round trip, each stream checked against its expected
   * revision, the events in the global order as given (a stream at most once). A wrong revision on
   * any stream throws WrongExpectedRevisionError naming that stream, and nothing is appended; a
   * retry with the same event ids returns the original results. Results in the order given.
   */
  readonly appendToStreams?: (appends: readonly StreamAppend[]) => Promise<AppendResult[]>;
}

/**
 * One database transaction around some work. While `run` is active, every appendToStream and
 * readStream the work makes (directly or through anything it awaits) goes through that transaction,
 * so the work reads its own appends, and the appends commit together with whatever the work writes
 * through `sql`, or not at all. The work's result is returned after COMMIT; a throw rolls back.
 * The transaction begins at the work's first statement (work that streams an upload first holds no
 * connection meanwhile); work that issues none commits nothing. A run inside a run joins the outer
 * transaction (its hooks do not run).
 */
export interface UnitOfWork {
  run<T>(work: (sql: SqlExecutor) => Promise<T>, hooks?: UnitOfWorkHooks): Promise<T>;
  /**
   * Reads on the unit's database outside any transaction (one statement, no BEGIN and COMMIT
   * around it): for a look-up before a run. Inside a run, the run's transaction.
   */
  read?<T>(work: (sql: SqlExecutor) => Promise<T>): Promise<T>;
  /** True when called from inside a run (in the run's async context). */
  isActive(): boolean;
  /**
   * Inside a run: `effect` runs once the run has committed, and never if it rolls back (deleting a
   * file the committed state no longer references). Outside a run: at once.
   */
  afterCommit(effect: () => Promise<void>): Promise<void>;
  /**
   * Inside a run: `effect` runs if the run rolls back after all (a concurrent duplicate won, the
   * commit failed), e.g. to delete a file stored for writes that no longer exist. Outside: never.
   */
  afterRollback(effect: () => Promise<void>): void;
}

/** `effect` if the open unit of work rolls back after the caller's writes succeeded. */
export function afterRollback(store: EventStore, effect: () => Promise<void>): void {
  store.unitOfWork?.afterRollback(effect);
}

/** `effect` once the caller's writes are committed: after the open unit of work, or now. */
export function afterCommit(store: EventStore, effect: () => Promise<void>): Promise<void> {
  return store.unitOfWork ? store.unitOfWork.afterCommit(effect) : effect();
}

export interface UnitOfWorkHooks {
  /**
   * Runs right after BEGIN, before the work's first statement (e.g. to take a lock and check that
   * the work is still wanted). When it throws, the unit rolls back and `run` rejects with that
   * error, whatever the work made of it.
   */
  readonly onBegin?: (sql: SqlExecutor) => Promise<void>;
}

/**
 * The unit of work was rolled back because it cannot commit as it stands, though running it again
 * from the start can (a lock cycle with another transaction, or an append that would make the
 * global order contradict its stream's order).
 */
export class UnitOfWorkConflictError extends Error {
  constructor(reason: string, options?: ErrorOptions) {
    super(`unit of work must be retried: ${reason}`, options);
    this.name = 'UnitOfWorkConflictError';
  }
}

export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly streamName: string,
    readonly expected: ExpectedRevision,
    readonly actual: bigint | 'no_stream',
  ) {
    super(`stream ${streamName}: expected revision ${String(expected)}, actual ${String(actual)}`);
    this.name = 'WrongExpectedRevisionError';
  }
}

/** Some, but not all, of the event ids were already appended: not a clean retry. */
export class IdempotencyConflictError extends Error {
  constructor(readonly streamName: string) {
    super(`stream ${streamName}: a retry must repeat exactly the same events`);
    this.name = 'IdempotencyConflictError';
  }
}
