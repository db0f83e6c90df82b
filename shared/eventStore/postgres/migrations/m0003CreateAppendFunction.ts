import pg from 'pg';
import type { Migration } from './migration';

/**
 * Appending is one statement, one round trip: check for a retry, take the stream's lock, move the
 * stream's revision, insert the events, wake subscribers.
 *
 * The lock is an advisory lock taken BEFORE the first write, because the global order is
 * (transaction id, sequence) and a transaction id is assigned at the first write. Were writers of
 * one stream serialised only by the stream row's lock, a writer could be assigned its id, then wait
 * for the row behind a writer with a higher id, and so sort before it while holding the next
 * revision: the global order would contradict the stream's order. Waiting on an advisory lock
 * assigns no id, so a writer of a stream always gets a higher id than the one it waited for.
 * Outcomes are returned as rows rather than raised, so a conflict costs no error round trip.
 */
export const m0003CreateAppendFunction: Migration = {
  version: 3,
  name: 'create append function',
  sql: ({ schema, events, streams, appendFunction, channel }) => `
-- Zero rows when none of the ids exist; otherwise the retry's original result, or a conflict when
-- only some of them exist (or they belong to another stream).
CREATE FUNCTION ${schema}.previous_append(p_stream_name text, p_ids uuid[])
RETURNS TABLE (o_outcome text, o_revision bigint, o_transaction_id xid8, o_global_position bigint)
LANGUAGE sql STABLE AS $fn$
  SELECT CASE WHEN count(*) = cardinality(p_ids) AND bool_and(e.stream_name = p_stream_name)
              THEN 'duplicate' ELSE 'idempotency_conflict' END,
         max(e.stream_revision),
         (array_agg(e.transaction_id ORDER BY e.stream_revision DESC))[1],
         (array_agg(e.global_position ORDER BY e.stream_revision DESC))[1]
    FROM ${events} AS e
   WHERE e.event_id = ANY (p_ids)
  HAVING count(*) > 0
$fn$;

CREATE FUNCTION ${appendFunction}(
  p_stream_name text,
  p_expected_kind text,
  p_expected_revision bigint,
  p_ids uuid[],
  p_types text[],
  p_data jsonb[],
  p_metadata jsonb[]
) RETURNS TABLE (o_outcome text, o_revision bigint, o_transaction_id xid8, o_global_position bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_count constant bigint := cardinality(p_ids);
  v_revision bigint;
  v_last_position bigint;
BEGIN
  RETURN QUERY SELECT * FROM ${schema}.previous_append(p_stream_name, p_ids);
  IF FOUND THEN RETURN; END IF;

  PERFORM pg_advisory_xact_lock(hashtextextended('event_store:' || p_stream_name, 0));
  CASE p_expected_kind
    WHEN 'any' THEN
      INSERT INTO ${streams} AS s (stream_name, revision) VALUES (p_stream_name, v_count - 1)
        ON CONFLICT (stream_name) DO UPDATE SET revision = s.revision + v_count
        RETURNING s.revision INTO v_revision;
    WHEN 'no_stream' THEN
      INSERT INTO ${streams} AS s (stream_name, revision) VALUES (p_stream_name, v_count - 1)
        ON CONFLICT (stream_name) DO NOTHING
        RETURNING s.revision INTO v_revision;
    WHEN 'stream_exists' THEN
      UPDATE ${streams} AS s SET revision = s.revision + v_count
       WHERE s.stream_name = p_stream_name
       RETURNING s.revision INTO v_revision;
    WHEN 'exact' THEN
      UPDATE ${streams} AS s SET revision = s.revision + v_count
       WHERE s.stream_name = p_stream_name AND s.revision = p_expected_revision
       RETURNING s.revision INTO v_revision;
    ELSE
      RAISE EXCEPTION 'unknown expected revision kind %', p_expected_kind
        USING ERRCODE = 'invalid_parameter_value';
  END CASE;

  IF v_revision IS NULL THEN
    -- Lost the stream row to another writer. If that writer was this same append (a concurrent
    -- retry), it has committed by now and this statement's fresh snapshot sees it.
    RETURN QUERY SELECT * FROM ${schema}.previous_append(p_stream_name, p_ids);
    IF FOUND THEN RETURN; END IF;
    RETURN QUERY SELECT 'wrong_revision'::text,
      (SELECT s.revision FROM ${streams} AS s WHERE s.stream_name = p_stream_name),
      NULL::xid8, NULL::bigint;
    RETURN;
  END IF;

  WITH inserted AS (
    INSERT INTO ${events} (stream_name, stream_revision, event_id, event_type, data, metadata)
    SELECT p_stream_name, v_revision - v_count + n.ordinal, n.id, n.type, n.data, n.metadata
      FROM unnest(p_ids, p_types, p_data, p_metadata) WITH ORDINALITY AS n(id, type, data, metadata, ordinal)
     ORDER BY n.ordinal
    RETURNING global_position
  )
  SELECT max(inserted.global_position) INTO v_last_position FROM inserted;

  -- Delivered at commit, never before: a woken subscriber then finds something new to read.
  PERFORM pg_notify(${pg.escapeLiteral(channel)}, '');
  RETURN QUERY SELECT 'appended'::text, v_revision, pg_current_xact_id(), v_last_position;
END;
$fn$;
`,
};
