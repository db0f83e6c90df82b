import path from 'node:path';
import pg from 'pg';
import type { Config } from '#shared/config/config';
import type { EventStore } from '#shared/eventStore/eventStore';
import { createPostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import { createEventStoreDbEventStore } from '#shared/eventStore/eventStoreDb/eventStoreDbEventStore';
import { upcastingEventStore } from '#shared/eventStore/upcastingEventStore';
import { loadPasswords } from '#shared/infra/postgres/credentialsFile';
import { defaultCredentialsFile } from '#shared/infra/postgres/embeddedPostgres';
import { livePostmaster } from '#shared/infra/postgres/livePostmaster';
import { loopbackUrl } from '#shared/infra/postgres/superuserAccess';
import { DATABASE, ROLES } from './openInfrastructure';

/** The service's database as an operator's tool (verify-ledger, verify-projections) reaches it. */
export interface RunningDatabase {
  /** PostgreSQL URL of the read models (and of the event store when it is the PostgreSQL adapter). */
  readonly databaseUrl: string;
  /** Where it was found, for messages: `DATABASE_URL`, or the embedded server's data directory and port. */
  readonly description: string;
  /** Connections as the service's own role. */
  readonly pool: pg.Pool;
  /** The configured event store (PostgreSQL in that database, or EventStoreDB), upcasting as the service reads. */
  readonly store: EventStore;
  close(): Promise<void>;
}

export class NoRunningDatabaseError extends Error {}

/**
 * Connects to the database of the service as configured, the way the service does: DATABASE_URL,
 * or else the embedded PostgreSQL that the running all-in-one started in DATA_DIR/postgres, found
 * through its postmaster.pid (its port changes at each start) and entered as the service's role
 * with the password from the credentials file beside it. Unlike openInfrastructure, it starts,
 * provisions and migrates nothing: with no DATABASE_URL and no server running on DATA_DIR it
 * throws NoRunningDatabaseError (start the service, or set DATABASE_URL).
 */
export async function connectToRunningDatabase(
  config: Config,
  options: { readonly poolSize?: number } = {},
): Promise<RunningDatabase> {
  const { databaseUrl, description } = config.databaseUrl
    ? { databaseUrl: config.databaseUrl, description: 'DATABASE_URL' }
    : await runningEmbedded(config.dataDir);
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.poolSize ?? 4,
    connectionTimeoutMillis: 5000,
  });
  pool.on('error', () => undefined); // a dead idle connection surfaces on the next query instead
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new Error(`cannot connect to the database (${description}): ${String(error)}`, { cause: error });
  }
  const store = upcastingEventStore(
    config.eventStoreConnectionString
      ? createEventStoreDbEventStore({ connectionString: config.eventStoreConnectionString })
      : createPostgresEventStore({ connectionString: databaseUrl, poolSize: options.poolSize ?? 4 }),
  );
  return {
    databaseUrl,
    description,
    pool,
    store,
    async close() {
      await store.close().catch(() => undefined);
      await pool.end().catch(() => undefined);
    },
  };
}

async function runningEmbedded(dataDir: string): Promise<{ databaseUrl: string; description: string }> {
  const clusterDir = path.join(dataDir, 'postgres');
  const live = livePostmaster(clusterDir);
  if (!live)
    throw new NoRunningDatabaseError(
      `no DATABASE_URL, and no PostgreSQL is running on DATA_DIR=${dataDir} (start the service, or set DATABASE_URL)`,
    );
  const passwords = await loadPasswords(defaultCredentialsFile(clusterDir), [ROLES.app]);
  return {
    databaseUrl: loopbackUrl(live.port, ROLES.app, passwords[ROLES.app]!, DATABASE),
    description: `the embedded PostgreSQL of ${clusterDir} (port ${live.port})`,
  };
}
