import { open } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { FileStore } from '@tus/file-store';
import { S3Store, type MetadataValue } from '@tus/s3-store';
import { type DataStore, type Locker, Upload } from '@tus/server';
import type { BlobStore } from '#shared/blobStore/blobStore';
import type { S3Config, TusConfig } from '#shared/config/config';
import type { Logger } from '#shared/logging/logger';
import { BlobKeyedDataStore, localTruncate } from './tusDataStore';
import { PgAdvisoryLocker } from './pgAdvisoryLocker';
import { PgKvStore } from './pgKvStore';
import { deleteTusUpload, ensureTusSchema } from './tusUploadsTable';
import { removeExpiredTusUploads } from './removeExpiredTusUploads';
import { tusBlobKey } from './tusKeys';
import { RunningUploadHashes } from './runningUploadHashes';
import { heardClientErrors } from '#shared/infra/postgres/heardClientErrors';

/** What the tus endpoint works with, shared by every instance through PostgreSQL and the blob store. */
export interface TusStorage {
  readonly dataStore: DataStore;
  readonly locker: Locker;
  /** The read models' pool, where tus.uploads lives. */
  readonly pool: pg.Pool;
  readonly blobs: BlobStore;
  readonly config: TusConfig;
  /** Whether the bytes go to S3 (parts straight into the bucket) rather than the local disk. */
  readonly onS3: boolean;
  /** SHA-256 of uploads followed while their bytes came through this process. */
  readonly hashes: RunningUploadHashes;
  /** Makes a finished upload's bytes durable (local disk: fsync; S3: already). */
  makeDurable(id: string): Promise<void>;
  /** Removes expired unfinished uploads (and purged finished rows) now; resolves with how many. */
  removeExpired(): Promise<number>;
  close(): Promise<void>;
}

export interface TusStorageOptions {
  readonly databaseUrl: string;
  readonly pool: pg.Pool;
  readonly blobs: BlobStore;
  readonly config: TusConfig;
  /** S3_*; absent: the local disk's blob root is `blobRoot`. */
  readonly s3: S3Config | undefined;
  readonly blobRoot: string;
  readonly logger: Logger;
  /** BLOB_DIRECT_IO: whole batches written with O_DIRECT on the local disk (default true). */
  readonly directIo?: boolean;
  /** Run the periodic removal of expired uploads (one instance at a time across the cluster). */
  readonly runCleanup: boolean;
}

function s3DataStore(s3: S3Config, pool: pg.Pool, config: TusConfig): DataStore {
  return new S3Store({
    partSize: config.s3PartSizeBytes,
    expirationPeriodInMilliseconds: config.expiryMs,
    cache: new PgKvStore<MetadataValue>(pool, (stored) => ({ ...stored, file: new Upload(stored.file) })),
    s3ClientConfig: {
      bucket: s3.bucket,
      region: s3.region,
      endpoint: `${s3.useSSL ? 'https' : 'http'}://${s3.endPoint}:${s3.port}`,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey },
    },
  });
}

export async function openTusStorage(options: TusStorageOptions): Promise<TusStorage> {
  const { pool, config, logger } = options;
  await ensureTusSchema(pool);
  // Locks are held for a whole PATCH: on connections of their own, never starving the queries.
  const lockPool = heardClientErrors(
    new pg.Pool({
      connectionString: options.databaseUrl,
      max: config.lockConnections,
      connectionTimeoutMillis: 5000,
    }),
  );
  lockPool.on('error', (error) => logger.debug('idle tus lock connection failed', { error: String(error) }));
  const blobRoot = path.resolve(options.blobRoot);
  const inner = options.s3
    ? s3DataStore(options.s3, pool, config)
    : new FileStore({
        directory: blobRoot,
        configstore: new PgKvStore<Upload>(pool, (stored) => new Upload(stored)),
        expirationPeriodInMilliseconds: config.expiryMs,
      });
  const hashes = new RunningUploadHashes();
  const dataStore = new BlobKeyedDataStore(inner, {
    hashes,
    expirationMs: config.expiryMs,
    truncate: options.s3 ? undefined : localTruncate(blobRoot),
    localFiles: options.s3 ? undefined : { root: blobRoot, directIo: options.directIo ?? true },
    checksumBufferMaxBytes: config.checksumMaxBytes,
    afterRemove: (id) => deleteTusUpload(pool, id),
    beforeCreate: options.s3 ? onceSucceeded(() => options.blobs.ping()) : undefined,
  });
  const locker = new PgAdvisoryLocker(lockPool, config.lockWaitMs, {
    connectionString: options.databaseUrl,
    logger,
  });
  const storage = {
    dataStore,
    locker,
    hashes,
    pool,
    blobs: options.blobs,
    config,
    onS3: Boolean(options.s3),
  };
  const removeExpired = () => removeExpiredTusUploads(storage, logger);

  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  if (options.runCleanup) {
    const tick = (): void => {
      running = removeExpired()
        .catch((error: unknown) => logger.warn('tus cleanup failed', { error: String(error) }))
        .finally(() => {
          running = undefined;
          if (timer) timer = setTimeout(tick, config.cleanupIntervalMs).unref();
        });
    };
    timer = setTimeout(tick, Math.min(config.cleanupIntervalMs, 1000)).unref();
  }
  return {
    ...storage,
    removeExpired,
    makeDurable: (id) => (options.s3 ? Promise.resolve() : fsyncFile(blobRoot, id)),
    async close() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running;
      await locker.close();
      await lockPool.end();
    },
  };
}

/** The file store does not flush: the upload's file and its directory are, before it is recorded. */
async function fsyncFile(blobRoot: string, id: string): Promise<void> {
  const file = path.join(blobRoot, ...tusBlobKey(id).split('/'));
  for (const each of [file, path.dirname(file)]) {
    const handle = await open(each, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
}

/** Runs `work` until it succeeds once; later calls resolve at once. */
function onceSucceeded(work: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () =>
    (done ??= work().catch((error: unknown) => {
      done = undefined;
      throw error;
    }));
}
