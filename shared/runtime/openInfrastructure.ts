import path from 'node:path';
import pg from 'pg';
import type { Config } from '../config/config';
import type { EventStore } from '../eventStore/eventStore';
import type { BlobStore } from '../blobStore/blobStore';
import { createPostgresEventStore } from '../eventStore/postgres/postgresEventStore';
import { createEventStoreDbEventStore } from '../eventStore/eventStoreDb/eventStoreDbEventStore';
import { createLocalDiskBlobStore } from '../blobStore/localDisk/createLocalDiskBlobStore';
import { upcastingEventStore } from '../eventStore/upcastingEventStore';
import { createS3BlobStore } from '../blobStore/s3/createS3BlobStore';
import type { Logger } from '../logging/logger';

export interface Infrastructure {
  /** PostgreSQL URL of the read models (and of the event store when it is the PostgreSQL adapter). */
  readonly databaseUrl: string;
  readonly readModels: pg.Pool;
  readonly store: EventStore;
  readonly blobs: BlobStore;
  close(): Promise<void>;
}

const DATABASE = 'catalogue';

async function ensureDatabase(serverUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount === 0)
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`).catch((e: { code?: string }) => {
        if (e.code !== '42P04') throw e; // created by a process starting at the same moment
      });
  } finally {
    await client.end();
  }
}

async function startEmbedded(
  config: Config,
  logger: Logger,
  closers: (() => Promise<void>)[],
): Promise<string> {
  const dataDir = path.join(config.dataDir, 'postgres');
  logger.info('starting embedded PostgreSQL', { dataDir, port: config.embeddedPostgresPort });
  // Loaded only when needed: the package is ESM and brings PostgreSQL binaries along.
  const { startEmbeddedPostgres } = await import('../infra/postgres/embeddedPostgres.js');
  const embedded = await startEmbeddedPostgres({ dataDir, port: config.embeddedPostgresPort });
  closers.push(() => embedded.stop());
  await ensureDatabase(embedded.connectionString('postgres'), DATABASE);
  return embedded.connectionString(DATABASE);
}

/**
 * Opens what a service needs from its configuration: an external PostgreSQL (DATABASE_URL) or an
 * embedded one started from node_modules in DATA_DIR; the PostgreSQL or EventStoreDB event store;
 * local-disk or S3 blob storage.
 */
export async function openInfrastructure(
  config: Config,
  logger: Logger,
  options: { poolSize?: number } = {},
): Promise<Infrastructure> {
  const closers: (() => Promise<void>)[] = [];
  const databaseUrl = config.databaseUrl ?? (await startEmbedded(config, logger, closers));
  // A bounded connect: during an outage a request fails (503) instead of hanging.
  const readModels = new pg.Pool({
    connectionString: databaseUrl,
    max: options.poolSize ?? 20,
    connectionTimeoutMillis: 5000,
  });
  readModels.on('error', (error) =>
    logger.error('idle read-model connection failed', { error: String(error) }),
  );
  closers.unshift(() => readModels.end());

  let store: EventStore;
  if (config.eventStoreConnectionString) {
    store = createEventStoreDbEventStore({ connectionString: config.eventStoreConnectionString });
  } else {
    const pgStore = createPostgresEventStore({
      connectionString: databaseUrl,
      poolSize: options.poolSize ?? 10,
    });
    await pgStore.migrate();
    store = pgStore;
  }
  closers.unshift(() => store.close());
  store = upcastingEventStore(store);

  const blobs = config.s3
    ? createS3BlobStore(config.s3)
    : createLocalDiskBlobStore({ rootDir: path.join(config.dataDir, 'blobs') });

  return {
    databaseUrl,
    readModels,
    store,
    blobs,
    async close() {
      for (const close of closers)
        await close().catch((error: unknown) => logger.error('close failed', { error: String(error) }));
    },
  };
}
