import path from 'node:path';
import pg from 'pg';
import type { Config } from '#shared/config/config';
import type { EventStore } from '#shared/eventStore/eventStore';
import type { BlobStore } from '#shared/blobStore/blobStore';
import { createPostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import { grantEventStoreAccess } from '#shared/eventStore/postgres/grantEventStoreAccess';
import { DEFAULT_SCHEMA } from '#shared/eventStore/postgres/sqlNames';
import { createEventStoreDbEventStore } from '#shared/eventStore/eventStoreDb/eventStoreDbEventStore';
import { createLocalDiskBlobStore } from '#shared/blobStore/localDisk/createLocalDiskBlobStore';
import { upcastingEventStore } from '#shared/eventStore/upcastingEventStore';
import { createS3BlobStore } from '#shared/blobStore/s3/createS3BlobStore';
import type { Logger } from '#shared/logging/logger';
import { startEmbeddedPostgres, type RunningPostgres } from '#shared/infra/postgres/embeddedPostgres';
import { provisionDatabase } from '#shared/infra/postgres/provisionDatabase';
import { heardClientErrors } from '#shared/infra/postgres/heardClientErrors';

export interface Infrastructure {
  /** PostgreSQL URL of the read models (and of the event store when it is the PostgreSQL adapter). */
  readonly databaseUrl: string;
  readonly readModels: pg.Pool;
  readonly store: EventStore;
  readonly blobs: BlobStore;
  /** The supervised embedded server, when there is no DATABASE_URL (its state() is for /health/). */
  readonly embeddedPostgres: RunningPostgres | undefined;
  close(): Promise<void>;
}

export interface InfrastructureOptions {
  readonly poolSize?: number;
  /**
   * The embedded PostgreSQL died and could not be restarted. Default: log and exit with status 1,
   * so whatever supervises this process (systemd, compose, an operator) sees it.
   */
  readonly onEmbeddedPostgresGaveUp?: (error: Error) => void;
}

export const DATABASE = 'catalogue';
/** The embedded cluster's roles: the owner runs migrations, the service connects as the app role. */
export const ROLES = { owner: 'catalogue_owner', app: 'catalogue_app' } as const;

interface Connections {
  readonly databaseUrl: string;
  /** Runs the event store's migrations (the owner role); may equal databaseUrl. */
  readonly migrationUrl: string;
  readonly embedded?: RunningPostgres;
}

async function startEmbedded(
  config: Config,
  logger: Logger,
  options: InfrastructureOptions,
): Promise<Connections> {
  const dataDir = path.join(config.dataDir, 'postgres');
  logger.info('starting embedded PostgreSQL', { dataDir, port: config.embeddedPostgresPort ?? 'any free' });
  const gaveUp =
    options.onEmbeddedPostgresGaveUp ??
    ((error: Error) => {
      logger.error('exiting: the embedded PostgreSQL is down for good', { error: error.message });
      process.exit(1);
    });
  const embedded = await startEmbeddedPostgres({
    dataDir,
    port: config.embeddedPostgresPort,
    loginRoles: [ROLES.owner, ROLES.app],
    logger,
    onGiveUp: gaveUp,
  });
  try {
    await provisionDatabase({
      superuserUrl: embedded.connectionString('postgres'),
      database: DATABASE,
      roles: ROLES,
      ownerSchema: DEFAULT_SCHEMA,
    });
  } catch (error) {
    await embedded.stop();
    throw error;
  }
  logger.info('embedded PostgreSQL ready', { port: embedded.port });
  return {
    databaseUrl: embedded.connectionString(DATABASE, ROLES.app),
    migrationUrl: embedded.connectionString(DATABASE, ROLES.owner),
    embedded,
  };
}

/**
 * Migrates the PostgreSQL event store as its owner; when the service connects as another role,
 * grants that role exactly what appending and reading need (see grantEventStoreAccess).
 */
async function migrateEventStore(connections: Connections, appRole: string): Promise<void> {
  const owner = createPostgresEventStore({ connectionString: connections.migrationUrl, poolSize: 1 });
  try {
    await owner.migrate();
    const { rows } = await owner.pool.query<{ role: string }>('SELECT current_user AS role');
    if (rows[0]?.role !== appRole) await grantEventStoreAccess(owner.pool, owner.names, appRole);
  } finally {
    await owner.close();
  }
}

/**
 * Opens what a service needs from its configuration: an external PostgreSQL (DATABASE_URL, with
 * MIGRATION_DATABASE_URL for the owner role) or a supervised embedded one started from
 * node_modules in DATA_DIR; the PostgreSQL or EventStoreDB event store; local-disk or S3 blobs.
 */
export async function openInfrastructure(
  config: Config,
  logger: Logger,
  options: InfrastructureOptions = {},
): Promise<Infrastructure> {
  const closers: (() => Promise<void>)[] = [];
  const connections: Connections = config.databaseUrl
    ? { databaseUrl: config.databaseUrl, migrationUrl: config.migrationDatabaseUrl ?? config.databaseUrl }
    : await startEmbedded(config, logger, options);
  const { databaseUrl, embedded } = connections;
  if (embedded) closers.push(() => embedded.stop());
  // A bounded connect: during an outage a request fails (503) instead of hanging.
  const readModels = heardClientErrors(
    new pg.Pool({
      connectionString: databaseUrl,
      max: options.poolSize ?? 20,
      connectionTimeoutMillis: 5000,
    }),
    (error) => logger.debug('held read-model connection failed', { error: String(error) }),
  );
  // The pool drops the dead idle connection by itself; the supervised loops report the outage once.
  readModels.on('error', (error) =>
    logger.debug('idle read-model connection failed', { error: String(error) }),
  );
  closers.unshift(() => readModels.end());

  let store: EventStore;
  try {
    if (config.eventStoreConnectionString) {
      store = createEventStoreDbEventStore({ connectionString: config.eventStoreConnectionString });
    } else {
      const { rows } = await readModels.query<{ role: string }>('SELECT current_user AS role');
      await migrateEventStore(connections, rows[0]!.role);
      store = createPostgresEventStore({ connectionString: databaseUrl, poolSize: options.poolSize ?? 10 });
    }
  } catch (error) {
    for (const close of closers) await close().catch(() => undefined);
    throw error;
  }
  closers.unshift(() => store.close());
  store = upcastingEventStore(store);

  const blobs = config.s3
    ? createS3BlobStore(config.s3)
    : createLocalDiskBlobStore({
        rootDir: path.join(config.dataDir, 'blobs'),
        directIo: config.blobDirectIo,
      });

  return {
    databaseUrl,
    readModels,
    store,
    blobs,
    embeddedPostgres: embedded,
    async close() {
      for (const close of closers)
        await close().catch((error: unknown) => logger.error('close failed', { error: String(error) }));
    },
  };
}
