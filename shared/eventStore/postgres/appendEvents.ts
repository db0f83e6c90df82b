import {
  IdempotencyConflictError,
  UnitOfWorkConflictError,
  WrongExpectedRevisionError,
  type AppendResult,
  type ExpectedRevision,
  type NewEvent,
  type StreamAppend,
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

interface StreamsAppendRow extends AppendRow {
  readonly o_stream: number;
}

/**
 * One attempt at an atomic append to several streams, in one statement (m0007): results in the
 * order given; a refused stream throws as appendEvents would for it, and then nothing was appended.
 */
export async function appendEventsToStreams(
  db: SqlExecutor,
  names: SqlNames,
  appends: readonly StreamAppend[],
): Promise<AppendResult[]> {
  if (appends.length === 0) throw new RangeError('an append to streams needs at least one stream');
  for (const a of appends)
    if (a.events.length === 0)
      throw new RangeError(`stream ${a.streamName}: an append needs at least one event`);
  const events = appends.flatMap((a) => a.events);
  const expected = appends.map((a) => a.expectedRevision ?? 'any');
  const { rows } = await db.query<StreamsAppendRow>({
    name: `appendToStreams:${names.schema}`,
    text: `SELECT o_stream, o_outcome, o_revision, o_transaction_id, o_global_position
             FROM ${names.appendToStreamsFunction}($1::text[], $2::text[], $3::bigint[], $4::integer[],
                  $5::uuid[], $6::text[], $7::jsonb[], $8::jsonb[])`,
    values: [
      appends.map((a) => a.streamName),
      expected.map((e) => (typeof e === 'bigint' ? 'exact' : e)),
      expected.map((e) => (typeof e === 'bigint' ? e.toString() : null)),
      appends.map((a) => a.events.length),
      events.map((event) => event.id),
      events.map((event) => event.type),
      events.map((event) => JSON.stringify(event.data ?? null)),
      events.map((event) => JSON.stringify(event.metadata)),
    ],
  });
  // A refusal is one row, the refused stream's; it throws here.
  const results = rows.map((row) => {
    const index = row.o_stream - 1;
    return toAppendResult(row, appends[index]!.streamName, expected[index]!);
  });
  if (results.length !== appends.length)
    throw new Error(`the append to ${appends.length} streams returned ${results.length} results`);
  return results;
}
