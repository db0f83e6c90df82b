import type { Migration } from './migration';
import { APPEND_FUNCTION_ARGUMENTS } from './m0005AppendAsOwner';

/**
 * The append no longer NOTIFYs in its own transaction. PostgreSQL serialises the commits of all
 * notifying transactions on one cluster-wide lock held across the commit's WAL flush, so with a
 * NOTIFY in every append, concurrent appends could not share a flush (group commit) and the
 * commit rate was that of one writer. The store announces appends after their commit instead
 * (appendNotifier: one coalesced NOTIFY, flushed asynchronously, for any number of appends), and
 * appendWithin NOTIFYs in the caller's transaction. The body is m0004's without the pg_notify;
 * SECURITY DEFINER and the search_path are set again (CREATE OR REPLACE resets them, see m0005).
 */
export const m0006NotifyAfterCommit: Migration = {
  version: 6,
  name: 'announce appends after commit, not inside the append',
  sql: ({ schema, events, streams, appendFunction }) => `
CREATE OR REPLACE FUNCTION ${appendFunction}(
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
  v_own_transaction xid8;
BEGIN
  RETURN QUERY SELECT * FROM ${schema}.previous_append(p_stream_name, p_ids);
  IF FOUND THEN RETURN; END IF;

  PERFORM pg_advisory_xact_lock(hashtextextended('event_store:' || p_stream_name, 0));

  v_own_transaction := pg_current_xact_id_if_assigned();
  IF v_own_transaction IS NOT NULL AND v_own_transaction < (
       SELECT e.transaction_id FROM ${events} AS e
        WHERE e.stream_name = p_stream_name
        ORDER BY e.stream_revision DESC
        LIMIT 1) THEN
    RETURN QUERY SELECT 'out_of_order'::text, NULL::bigint, NULL::xid8, NULL::bigint;
    RETURN;
  END IF;

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

  RETURN QUERY SELECT 'appended'::text, v_revision, pg_current_xact_id(), v_last_position;
END;
$fn$;

ALTER FUNCTION ${appendFunction}(${APPEND_FUNCTION_ARGUMENTS})
  SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION ${appendFunction}(${APPEND_FUNCTION_ARGUMENTS}) FROM PUBLIC;
`,
};
