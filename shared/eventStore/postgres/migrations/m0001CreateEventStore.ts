import type { Migration } from './migration';

/**
 * The events table is append-only. global_position comes from a sequence, but the global order is
 * (transaction_id, global_position): sequence numbers are taken before commit, so they can become
 * visible out of order, while readers only ever see transactions older than the oldest running one.
 */
export const m0001CreateEventStore: Migration = {
  version: 1,
  name: 'create event store',
  sql: ({ events, streams }) => `
CREATE TABLE ${events} (
  global_position bigserial PRIMARY KEY,
  transaction_id  xid8 NOT NULL DEFAULT pg_current_xact_id(),
  stream_name     text NOT NULL,
  stream_revision bigint NOT NULL,
  event_id        uuid NOT NULL CONSTRAINT events_event_id_unique UNIQUE,
  event_type      text NOT NULL,
  data            jsonb NOT NULL,
  metadata        jsonb NOT NULL,
  recorded_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  CONSTRAINT events_stream_revision_unique UNIQUE (stream_name, stream_revision)
);

CREATE INDEX events_global_order ON ${events} (transaction_id, global_position);

-- One row per stream: the row lock is what serialises appends to a stream.
CREATE TABLE ${streams} (
  stream_name text PRIMARY KEY,
  revision    bigint NOT NULL
);
`,
};
