import {
  IdempotencyConflictError,
  UnitOfWorkConflictError,
  WrongExpectedRevisionError,
  type AppendResult,
  type ExpectedRevision,
  type NewEvent,
} from '#shared/eventStore/eventStore';
import type { SqlExecutor } from './sqlExecutor';
import type { SqlNames } from './sqlNames';

interface AppendRow {
  readonly o_outcome: 'appended' | 'duplicate' | 'wrong_revision' | 'idempotency_conflict' | 'out_of_order';
  readonly o_revision: string | null;
  readonly o_transaction_id: string | null;
  readonly o_global_position: string | null;
}

/**
 * One attempt at an append, in one statement. `db` is the pool, or a client inside a transaction
 * the caller owns (the events then become visible when that transaction commits).
 */
export async function appendEvents(
  db: SqlExecutor,
  names: SqlNames,
  streamName: string,
  events: readonly NewEvent[],
  expectedRevision: ExpectedRevision = 'any',
): Promise<AppendResult> {
  if (events.length === 0) throw new RangeError(`stream ${streamName}: an append needs at least one event`);
  const { rows } = await db.query<AppendRow>({
    name: `append:${names.schema}`,
    text: `SELECT o_outcome, o_revision, o_transaction_id, o_global_position
             FROM ${names.appendFunction}($1, $2, $3, $4::uuid[], $5::text[], $6::jsonb[], $7::jsonb[])`,
    values: [
      streamName,
      typeof expectedRevision === 'bigint' ? 'exact' : expectedRevision,
      typeof expectedRevision === 'bigint' ? expectedRevision.toString() : null,
      events.map((event) => event.id),
      events.map((event) => event.type),
      events.map((event) => JSON.stringify(event.data ?? null)),
      events.map((event) => JSON.stringify(event.metadata)),
    ],
  });
  const row = rows[0];
  if (!row) throw new Error(`stream ${streamName}: the append function returned no row`);
  return toAppendResult(row, streamName, expectedRevision);
}

function toAppendResult(row: AppendRow, streamName: string, expected: ExpectedRevision): AppendResult {
  switch (row.o_outcome) {
    case 'appended':
    case 'duplicate':
      return {
        nextExpectedRevision: BigInt(row.o_revision ?? -1),
        position: {
          commit: BigInt(row.o_transaction_id ?? -1),
          prepare: BigInt(row.o_global_position ?? -1),
        },
      };
    case 'wrong_revision':
      throw new WrongExpectedRevisionError(
        streamName,
        expected,
        row.o_revision === null ? 'no_stream' : BigInt(row.o_revision),
      );
    case 'idempotency_conflict':
      throw new IdempotencyConflictError(streamName);
    case 'out_of_order':
      throw new UnitOfWorkConflictError(
        `stream ${streamName} was appended to by a younger transaction; this one would sort first`,
      );
  }
}

/**
 * Two identical appends in flight at once can both pass the retry check; the loser then hits the
 * unique event id. Running it again finds the winner's events and reports the original result.
 */
export function isConcurrentDuplicate(error: unknown): boolean {
  return (
    error instanceof Error &&
    'code' in error &&
    error.code === '23505' &&
    'constraint' in error &&
    error.constraint === 'events_event_id_unique'
  );
}
