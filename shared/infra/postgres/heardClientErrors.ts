import type pg from 'pg';

/**
 * Every client of the pool listens for 'error' from the moment it connects, whoever holds it. The
 * pool listens only to idle clients, and a checked-out client whose connection dies between two
 * statements (a failover, pg_terminate_backend) reports it as an 'error' event: one nobody hears ends
 * the process. The holders that watch their client (withClient, the unit of work, the leader lease,
 * the tus locker) still hear it and discard it; for any other, the client is no longer queryable, so
 * its next statement fails and the pool drops it when it is given back. `onLost` hears each such
 * error (for a log line).
 */
export function heardClientErrors(pool: pg.Pool, onLost: (error: Error) => void = () => undefined): pg.Pool {
  pool.on('connect', (client) => {
    client.on('error', onLost);
  });
  return pool;
}
