import type { Migration } from './migration';
import { APPEND_FUNCTION_ARGUMENTS } from './m0005AppendAsOwner';
import { APPEND_TO_STREAMS_ARGUMENTS } from './m0007AppendToStreams';

/**
 * The append functions' statements run on generic plans, cached once per session. Left to choose
 * (plan_cache_mode auto), PostgreSQL kept planning each of them afresh on every call: the retry
 * check `SELECT * FROM previous_append(p_stream_name, p_ids)`, a SQL function inlined into the
 * plan, cost 0.36 ms of planning per append against 0.04 ms of execution (pg_stat_statements over
 * 3,000 appends of uploads' processing events). Every statement of the two functions looks rows
 * up by a unique key or a stream's index (event_id = ANY, stream_name, (stream_name,
 * stream_revision)), so the generic plan is the plan a custom one would pick. ALTER FUNCTION ...
 * SET adds to the functions' settings; their search_path stays as m0006 and m0007 set it.
 */
export const m0008GenericAppendPlans: Migration = {
  version: 8,
  name: 'append functions on generic plans',
  sql: ({ appendFunction, appendToStreamsFunction }) => `
ALTER FUNCTION ${appendFunction}(${APPEND_FUNCTION_ARGUMENTS})
  SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION ${appendToStreamsFunction}(${APPEND_TO_STREAMS_ARGUMENTS})
  SET plan_cache_mode = force_generic_plan;
`,
};
