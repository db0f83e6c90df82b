import pg from 'pg';

/**
 * Every SQL name the adapter uses, quoted once for its schema. Identifiers cannot be bound as
 * parameters, so the schema name is escaped here and nowhere else.
 */
export interface SqlNames {
  readonly schema: string;
  readonly events: string;
  readonly streams: string;
  readonly migrations: string;
  readonly appendFunction: string;
  /** Several streams' appends in one statement (m0007). */
  readonly appendToStreamsFunction: string;
  /** The NOTIFY channel, raw (for pg_notify and for matching notifications). */
  readonly channel: string;
  /** The NOTIFY channel quoted as an identifier (for LISTEN). */
  readonly channelIdentifier: string;
}

export const DEFAULT_SCHEMA = 'event_store';

export function sqlNames(schema: string): SqlNames {
  if (schema.length === 0 || schema.length > 48)
    throw new RangeError(`invalid event store schema name "${schema}"`);
  const quoted = pg.escapeIdentifier(schema);
  const channel = `${schema}_appended`;
  return {
    schema: quoted,
    events: `${quoted}.events`,
    streams: `${quoted}.streams`,
    migrations: `${quoted}.schema_migrations`,
    appendFunction: `${quoted}.append_events`,
    appendToStreamsFunction: `${quoted}.append_to_streams`,
    channel,
    channelIdentifier: pg.escapeIdentifier(channel),
  };
}
