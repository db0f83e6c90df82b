import type { Migration } from './migration';

/** The multi-stream append function's signature, for GRANT / REVOKE. */
export const APPEND_TO_STREAMS_ARGUMENTS =
  'text[], text[], bigint[], integer[], uuid[], text[], jsonb[], jsonb[]';

/**
 * Appends to several streams atomically in one statement: a create's events (its id's IdAllocated,
 * its upload's UploadReceived, its BrainCreated) cost one round trip, one commit and one WAL flush
 * instead of one each. Stream i gets the next p_counts[i] events of the arrays, in that order, which
 * is also their global order. Per stream the guarantees of append_events hold:
 * - every stream's advisory lock is taken before the first write, in one order, so the transaction
 *   id, assigned at the first write, is younger than every event already in those streams (m0003),
 *   and two multi-stream appends never wait on each other in a cycle. The order: an id sequence's
 *   stream (`sequence-*`, IdAllocator) first, then the lock keys sorted. Inside a longer
 *   transaction, a lost guess of the sequence's revision keeps the locks it took and the allocator
 *   tries the next id, locking that id's streams out of order; that is safe only because whoever
 *   holds such a stream holds, or has held and released, the sequence first. Sorted alone, a try
 *   that held the new id's stream while it waited for the sequence deadlocked with the retry of the
 *   sequence's holder (bic import --jobs 6, each create a unit of work for its Idempotency-Key);
 * - inside a longer transaction that already has an id, a stream a younger transaction appended to
 *   meanwhile is refused ('out_of_order', m0004);
 * - every expected revision is checked before anything is written: one wrong revision and nothing
 *   is appended ('wrong_revision' with that stream's actual revision);
 * - a retry (every event id already recorded, each in its stream) returns the original results
 *   ('duplicate'); some ids recorded and not others is 'idempotency_conflict'.
 * The outcome rows name their stream (o_stream, 1-based): on success one row per stream in order,
 * otherwise one row, the refused stream's.
 */
export const m0007AppendToStreams: Migration = {
  version: 7,
  name: 'append to several streams in one statement',
  sql: ({ schema, events, streams, appendToStreamsFunction }) => `
-- previous_append for each stream's share of the ids (none recorded: 'idempotency_conflict').
CREATE FUNCTION ${schema}.previous_appends(p_stream_names text[], p_counts integer[], p_ids uuid[])
RETURNS TABLE (o_stream integer, o_outcome text, o_revision bigint, o_transaction_id xid8, o_global_position bigint)
LANGUAGE sql STABLE AS $fn$
  WITH bounds AS (
    SELECT i, (sum(p_counts[i]) OVER (ORDER BY i))::integer AS last_index
      FROM generate_subscripts(p_stream_names, 1) AS i)
  SELECT b.i, coalesce(p.o_outcome, 'idempotency_conflict'), p.o_revision, p.o_transaction_id,
         p.o_global_position
    FROM bounds AS b
    LEFT JOIN LATERAL ${schema}.previous_append(
      p_stream_names[b.i], p_ids[b.last_index - p_counts[b.i] + 1 : b.last_index]) AS p ON true
   ORDER BY b.i
$fn$;

CREATE FUNCTION ${appendToStreamsFunction}(
  p_stream_names text[],
  p_expected_kinds text[],
  p_expected_revisions bigint[],
  p_counts integer[],
  p_ids uuid[],
  p_types text[],
  p_data jsonb[],
  p_metadata jsonb[]
) RETURNS TABLE (o_stream integer, o_outcome text, o_revision bigint, o_transaction_id xid8, o_global_position bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_streams constant integer := coalesce(cardinality(p_stream_names), 0);
  v_total constant integer := coalesce(cardinality(p_ids), 0);
  v_found integer;
  v_key bigint;
  v_own_transaction xid8;
  v_current bigint;
  v_expected boolean;
  v_revision bigint;
  v_last_position bigint;
  v_from integer;
  v_to integer;
  i integer;
BEGIN
  IF v_streams = 0 OR cardinality(p_expected_kinds) <> v_streams
     OR cardinality(p_expected_revisions) <> v_streams OR cardinality(p_counts) <> v_streams
     OR cardinality(p_types) <> v_total OR cardinality(p_data) <> v_total
     OR cardinality(p_metadata) <> v_total
     OR (SELECT sum(c) FROM unnest(p_counts) AS c) <> v_total
     OR (SELECT min(c) FROM unnest(p_counts) AS c) < 1
     OR (SELECT count(DISTINCT s) FROM unnest(p_stream_names) AS s) <> v_streams
     OR EXISTS (SELECT FROM unnest(p_expected_kinds) AS k
                 WHERE k IS NULL OR k NOT IN ('any', 'no_stream', 'stream_exists', 'exact')) THEN
    RAISE EXCEPTION 'malformed multi-stream append' USING ERRCODE = 'invalid_parameter_value';
  END IF;

  SELECT count(*) INTO v_found FROM ${events} AS e WHERE e.event_id = ANY (p_ids);
  IF v_found > 0 THEN
    RETURN QUERY SELECT p.o_stream, CASE WHEN v_found = v_total THEN p.o_outcome ELSE 'idempotency_conflict' END,
                        p.o_revision, p.o_transaction_id, p.o_global_position
                   FROM ${schema}.previous_appends(p_stream_names, p_counts, p_ids) AS p;
    RETURN;
  END IF;

  FOR v_key IN
    SELECT k.key
      FROM (SELECT DISTINCT s LIKE 'sequence-%' AS sequence, hashtextextended('event_store:' || s, 0) AS key
              FROM unnest(p_stream_names) AS s) AS k
     ORDER BY k.sequence DESC, k.key
  LOOP
    PERFORM pg_advisory_xact_lock(v_key);
  END LOOP;

  v_own_transaction := pg_current_xact_id_if_assigned();
  FOR i IN 1 .. v_streams LOOP
    IF v_own_transaction IS NOT NULL AND v_own_transaction < (
         SELECT e.transaction_id FROM ${events} AS e
          WHERE e.stream_name = p_stream_names[i]
          ORDER BY e.stream_revision DESC
          LIMIT 1) THEN
      RETURN QUERY SELECT i, 'out_of_order'::text, NULL::bigint, NULL::xid8, NULL::bigint;
      RETURN;
    END IF;
    v_current := (SELECT s.revision FROM ${streams} AS s WHERE s.stream_name = p_stream_names[i]);
    v_expected := CASE p_expected_kinds[i]
                    WHEN 'any' THEN true
                    WHEN 'no_stream' THEN v_current IS NULL
                    WHEN 'stream_exists' THEN v_current IS NOT NULL
                    ELSE v_current IS NOT DISTINCT FROM p_expected_revisions[i]
                  END;
    IF NOT v_expected THEN
      -- An identical append that committed while this one waited for the locks: its results.
      IF (SELECT count(*) FROM ${events} AS e WHERE e.event_id = ANY (p_ids)) = v_total THEN
        RETURN QUERY SELECT * FROM ${schema}.previous_appends(p_stream_names, p_counts, p_ids);
        RETURN;
      END IF;
      RETURN QUERY SELECT i, 'wrong_revision'::text, v_current, NULL::xid8, NULL::bigint;
      RETURN;
    END IF;
  END LOOP;

  v_from := 1;
  FOR i IN 1 .. v_streams LOOP
    v_to := v_from + p_counts[i] - 1;
    INSERT INTO ${streams} AS s (stream_name, revision) VALUES (p_stream_names[i], p_counts[i] - 1)
      ON CONFLICT (stream_name) DO UPDATE SET revision = s.revision + p_counts[i]
      RETURNING s.revision INTO v_revision;
    WITH inserted AS (
      INSERT INTO ${events} (stream_name, stream_revision, event_id, event_type, data, metadata)
      SELECT p_stream_names[i], v_revision - p_counts[i] + n.ordinal, n.id, n.type, n.data, n.metadata
        FROM unnest(p_ids[v_from:v_to], p_types[v_from:v_to], p_data[v_from:v_to], p_metadata[v_from:v_to])
             WITH ORDINALITY AS n(id, type, data, metadata, ordinal)
       ORDER BY n.ordinal
      RETURNING global_position
    )
    SELECT max(inserted.global_position) INTO v_last_position FROM inserted;
    RETURN QUERY SELECT i, 'appended'::text, v_revision, pg_current_xact_id(), v_last_position;
    v_from := v_to + 1;
  END LOOP;
END;
$fn$;

ALTER FUNCTION ${appendToStreamsFunction}(${APPEND_TO_STREAMS_ARGUMENTS})
  SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION ${appendToStreamsFunction}(${APPEND_TO_STREAMS_ARGUMENTS}) FROM PUBLIC;
REVOKE ALL ON FUNCTION ${schema}.previous_appends(text[], integer[], uuid[]) FROM PUBLIC;
`,
};
