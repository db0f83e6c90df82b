import path from 'node:path';
import { DEFAULT_TIMEOUT_BASE_SECONDS, crossChecks, envSchema, type EnvValues } from './configSchema';
import type { Endpoint, RateLimitRule } from './envVariable';

export type { RateLimitRule } from './envVariable';

/**
 * The one place where environment variables become configuration. Every service's main.ts calls
 * loadConfig(process.env). Each variable's type, bounds, default and meaning are written once, in
 * ./configSchema (and docs/configuration.md is generated from it); these types are the shape the
 * services read, each field naming the variable it comes from.
 */
export interface Config {
  /** HOST, PORT */
  readonly host: string;
  readonly port: number;
  /** DATA_DIR, resolved against the working directory. */
  readonly dataDir: string;
  /** BLOB_DIRECT_IO */
  readonly blobDirectIo: boolean;
  /** BLOB_SWEEP_* (shared/blobSweep) */
  readonly blobSweep: BlobSweepConfig;
  /** TUS_* (resumable uploads, shared/tus) */
  readonly tus: TusConfig;
  /** DATABASE_URL; absent: the all-in-one starts an embedded PostgreSQL in dataDir/postgres. */
  readonly databaseUrl: string | undefined;
  /** MIGRATION_DATABASE_URL; absent: DATABASE_URL migrates too. */
  readonly migrationDatabaseUrl: string | undefined;
  /** EMBEDDED_PG_PORT; absent: a free port at each start, so several all-in-ones can run side by side. */
  readonly embeddedPostgresPort: number | undefined;
  /** EVENTSTORE_CONNECTION_STRING */
  readonly eventStoreConnectionString: string | undefined;
  /** S3_*; absent: files on the local disk. */
  readonly s3: S3Config | undefined;
  /** ELASTICSEARCH_URL, SEARCH_BACKEND */
  readonly elasticsearchUrl: string | undefined;
  readonly searchBackend: 'postgres' | 'elasticsearch';
  /** SEARCH_IN_MEMORY: text searches answered from a copy of the search projection in each query API. */
  readonly searchInMemory: boolean;
  /** UPLOADER_EMAIL_VISIBILITY */
  readonly uploaderEmailVisibility: 'everyone' | 'owner';
  /** LIST_CACHE_MB, in bytes */
  readonly listCacheBytes: number;
  /** REPLAY_CACHE_MB, in bytes */
  readonly replayCacheBytes: number;
  /** KAFKA_*; absent: no relay runs. */
  readonly kafka: KafkaConfig | undefined;
  /** ADMIN_EMAIL, ADMIN_PASSWORD, ADMIN_USERNAME */
  readonly admin: { email: string; password: string; username: string } | undefined;
  /** LOGIN_TOKEN_TTL_DAYS, in milliseconds */
  readonly loginTokenTtlMs: number;
  /** PASSWORD_HASH_LOG_N */
  readonly passwordHashLogN: number;
  /** JSON_BODY_LIMIT_BYTES, MAX_UPLOAD_BYTES, MAX_AVATAR_BYTES, MAX_IMAGE_PIXELS */
  readonly jsonBodyLimitBytes: number;
  readonly maxUploadBytes: number;
  readonly maxAvatarBytes: number;
  readonly maxImagePixels: number;
  /** TRUST_PROXY, as Express's `trust proxy` takes it */
  readonly trustProxy: boolean | number | string;
  /** PUBLIC_BASE_URL, without a trailing slash */
  readonly publicBaseUrl: string | undefined;
  /** ALLOWED_HOSTS, lowercased; empty: any, with links kept to this machine. */
  readonly allowedHosts: readonly string[];
  /** LOG_LEVEL */
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** READ_YOUR_WRITES_TIMEOUT_MS */
  readonly readYourWritesTimeoutMs: number;
  /** HTTP_HEADERS_TIMEOUT_MS, HTTP_BODY_TIMEOUT_MS, HTTP_KEEP_ALIVE_TIMEOUT_MS (shared/http/connectionTimeouts) */
  readonly httpTimeouts: HttpTimeoutsConfig;
  /**
   * TEST-ONLY (FAULT_INJECT_CRASH_AFTER_COMMIT): the process SIGKILLs itself right after a write
   * carrying an Idempotency-Key has committed, before answering, to prove that a retry replays it.
   */
  readonly faultInjectCrashAfterCommit: boolean;
  /** HEALTH_MAX_PROJECTION_LAG_SECONDS */
  readonly healthMaxProjectionLagSeconds: number;
  /** LEDGER_HEAD_LOG_INTERVAL_SECONDS (0: the ledger head is not logged) */
  readonly ledgerHeadLogIntervalSeconds: number;
  /** PROCESSOR_* */
  readonly processor: ProcessorConfig;
  /** RATE_LIMIT_* */
  readonly rateLimits: {
    readonly login: RateLimitRule;
    readonly register: RateLimitRule;
    readonly tokenCreate: RateLimitRule;
    readonly upload: RateLimitRule;
    readonly default: RateLimitRule;
  };
}

/** How long a client may keep a connection waiting: headers in total, a silence in a body, idle between requests. */
export interface HttpTimeoutsConfig {
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
}

/** The upload processor (services/processor), alone or inside the all-in-one: PROCESSOR_*. */
export interface ProcessorConfig {
  /** PROCESSOR_ENABLED: whether the all-in-one runs one (the standalone processor always does). */
  readonly enabled: boolean;
  /** PROCESSOR_LEASE_SECONDS: a claim holds an upload this long unless renewed. */
  readonly leaseSeconds: number;
  /** PROCESSOR_CONCURRENCY: uploads of any size processed at once, each in its own worker thread. */
  readonly concurrency: number;
  /**
   * PROCESSOR_SMALL_UPLOAD_SLOTS: slots beside `concurrency` for small uploads, always open: a
   * small upload never waits behind big ones, and small ones are inspected in parallel.
   */
  readonly smallUploadSlots: number;
  /** PROCESSOR_SMALL_UPLOAD_MB, in bytes: an upload up to this size is small. */
  readonly smallUploadMaxBytes: number;
  /**
   * An inspection's time limit is `timeoutBaseSeconds` plus `timeoutPerGibSeconds` per GiB of the
   * file, at most `timeoutSeconds`; a worker past it is terminated and the upload fails (not retried).
   */
  readonly timeoutSeconds: number;
  readonly timeoutBaseSeconds: number;
  readonly timeoutPerGibSeconds: number;
  /** PROCESSOR_MAX_ATTEMPTS: runs of a crashed worker, or claims taken back, before the upload fails. */
  readonly maxAttempts: number;
  /** PROCESSOR_WORKER_MEMORY_MB: heap limit of each worker thread. */
  readonly workerMemoryMb: number;
  /**
   * PROCESSOR_NICE: nice value of the worker threads: under contention requests go first, and
   * processing still gets a share (19 would all but stop it while the cores are busy with requests).
   */
  readonly workerNice: number;
  /**
   * TEST-ONLY (PROCESSOR_INSPECTOR_MODULE): absolute path of a module exporting `inspectUpload`,
   * used instead of shared/formats (a deterministic or slow inspector for crash tests).
   */
  readonly inspectorModule: string | undefined;
}

/** BLOB_SWEEP_*: the sweep of leftovers of killed writes and of orphaned blobs, in milliseconds. */
export interface BlobSweepConfig {
  readonly enabled: boolean;
  readonly intervalMs: number;
  readonly leftoverGraceMs: number;
  readonly orphanGraceMs: number;
}

/** TUS_*: resumable uploads (shared/tus), in milliseconds and bytes. */
export interface TusConfig {
  readonly expiryMs: number;
  readonly cleanupIntervalMs: number;
  readonly lockWaitMs: number;
  readonly lockConnections: number;
  readonly s3PartSizeBytes: number;
  readonly checksumMaxBytes: number;
}

export interface KafkaConfig {
  readonly brokers: readonly string[];
  readonly clientId: string;
  /** Topics are `<prefix>.brains`, `<prefix>.uploads`, … */
  readonly topicPrefix: string;
}

/** S3_ENDPOINT taken apart, the credentials and the bucket. */
export interface S3Config extends Endpoint {
  readonly accessKey: string;
  readonly secretKey: string;
  readonly bucket: string;
  readonly region: string;
  /** S3_PRESIGNED_DOWNLOADS: downloads answer 302 to a presigned URL instead of being proxied. */
  readonly presignedDownloads: PresignedDownloadConfig | undefined;
}

export interface PresignedDownloadConfig {
  readonly expirySeconds: number;
  /** S3_PUBLIC_ENDPOINT: where clients reach the store, when not at S3_ENDPOINT. */
  readonly publicEndpoint: Endpoint | undefined;
}

/** Names every bad variable, one per line, each as "configuration: NAME problem". */
export class ConfigError extends Error {
  constructor(readonly problems: readonly { variable: string; message: string }[]) {
    super(problems.map(({ variable, message }) => `configuration: ${variable} ${message}`).join('\n'));
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

const MIB = 1024 * 1024;
const SECOND_MS = 1_000;
const DAY_MS = 86_400_000;

export function loadConfig(env: Env, cwd = process.cwd()): Config {
  // An empty variable counts as unset (`FOO=` in a compose file).
  const set = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const parsed = envSchema.safeParse(set);
  if (!parsed.success)
    throw new ConfigError(
      parsed.error.issues.map((issue) => ({ variable: String(issue.path[0]), message: issue.message })),
    );
  const problems = crossChecks(parsed.data);
  if (problems.length > 0) throw new ConfigError(problems);
  return toConfig(parsed.data, cwd);
}

function toConfig(v: EnvValues, cwd: string): Config {
  return {
    host: v.HOST,
    port: v.PORT,
    dataDir: path.resolve(cwd, v.DATA_DIR),
    blobDirectIo: v.BLOB_DIRECT_IO,
    blobSweep: {
      enabled: v.BLOB_SWEEP_ENABLED,
      intervalMs: v.BLOB_SWEEP_INTERVAL_SECONDS * SECOND_MS,
      leftoverGraceMs: v.BLOB_SWEEP_LEFTOVER_GRACE_SECONDS * SECOND_MS,
      orphanGraceMs: v.BLOB_SWEEP_ORPHAN_GRACE_SECONDS * SECOND_MS,
    },
    tus: {
      expiryMs: v.TUS_EXPIRY_SECONDS * SECOND_MS,
      cleanupIntervalMs: v.TUS_CLEANUP_INTERVAL_SECONDS * SECOND_MS,
      lockWaitMs: v.TUS_LOCK_WAIT_MS,
      lockConnections: v.TUS_LOCK_CONNECTIONS,
      s3PartSizeBytes: v.TUS_S3_PART_SIZE_BYTES,
      checksumMaxBytes: v.TUS_CHECKSUM_MAX_BYTES,
    },
    databaseUrl: v.DATABASE_URL,
    migrationDatabaseUrl: v.MIGRATION_DATABASE_URL,
    embeddedPostgresPort: v.EMBEDDED_PG_PORT,
    eventStoreConnectionString: v.EVENTSTORE_CONNECTION_STRING,
    s3: v.S3_ENDPOINT && {
      ...v.S3_ENDPOINT,
      accessKey: v.S3_ACCESS_KEY!,
      secretKey: v.S3_SECRET_KEY!,
      bucket: v.S3_BUCKET,
      region: v.S3_REGION,
      presignedDownloads: v.S3_PRESIGNED_DOWNLOADS
        ? { expirySeconds: v.S3_PRESIGN_EXPIRY_SECONDS, publicEndpoint: v.S3_PUBLIC_ENDPOINT }
        : undefined,
    },
    elasticsearchUrl: v.ELASTICSEARCH_URL,
    searchBackend: v.SEARCH_BACKEND,
    searchInMemory: v.SEARCH_IN_MEMORY,
    uploaderEmailVisibility: v.UPLOADER_EMAIL_VISIBILITY,
    listCacheBytes: v.LIST_CACHE_MB * MIB,
    replayCacheBytes: v.REPLAY_CACHE_MB * MIB,
    kafka:
      v.KAFKA_BROKERS.length > 0
        ? { brokers: v.KAFKA_BROKERS, clientId: v.KAFKA_CLIENT_ID, topicPrefix: v.KAFKA_TOPIC_PREFIX }
        : undefined,
    admin: v.ADMIN_EMAIL
      ? {
          email: v.ADMIN_EMAIL,
          password: v.ADMIN_PASSWORD!,
          username: v.ADMIN_USERNAME ?? v.ADMIN_EMAIL.split('@')[0]!,
        }
      : undefined,
    loginTokenTtlMs: v.LOGIN_TOKEN_TTL_DAYS * DAY_MS,
    passwordHashLogN: v.PASSWORD_HASH_LOG_N,
    jsonBodyLimitBytes: v.JSON_BODY_LIMIT_BYTES,
    maxUploadBytes: v.MAX_UPLOAD_BYTES,
    maxAvatarBytes: v.MAX_AVATAR_BYTES,
    maxImagePixels: v.MAX_IMAGE_PIXELS,
    trustProxy: v.TRUST_PROXY,
    publicBaseUrl: v.PUBLIC_BASE_URL?.replace(/\/$/, ''),
    allowedHosts: v.ALLOWED_HOSTS,
    logLevel: v.LOG_LEVEL,
    readYourWritesTimeoutMs: v.READ_YOUR_WRITES_TIMEOUT_MS,
    httpTimeouts: {
      headersTimeoutMs: v.HTTP_HEADERS_TIMEOUT_MS,
      bodyTimeoutMs: v.HTTP_BODY_TIMEOUT_MS,
      keepAliveTimeoutMs: v.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    },
    faultInjectCrashAfterCommit: v.FAULT_INJECT_CRASH_AFTER_COMMIT,
    healthMaxProjectionLagSeconds: v.HEALTH_MAX_PROJECTION_LAG_SECONDS,
    ledgerHeadLogIntervalSeconds: v.LEDGER_HEAD_LOG_INTERVAL_SECONDS,
    processor: {
      enabled: v.PROCESSOR_ENABLED,
      leaseSeconds: v.PROCESSOR_LEASE_SECONDS,
      concurrency: v.PROCESSOR_CONCURRENCY,
      smallUploadSlots: v.PROCESSOR_SMALL_UPLOAD_SLOTS,
      smallUploadMaxBytes: v.PROCESSOR_SMALL_UPLOAD_MB * MIB,
      timeoutSeconds: v.PROCESSOR_TIMEOUT_SECONDS,
      timeoutBaseSeconds: v.PROCESSOR_TIMEOUT_BASE_SECONDS ?? DEFAULT_TIMEOUT_BASE_SECONDS,
      timeoutPerGibSeconds: v.PROCESSOR_TIMEOUT_PER_GIB_SECONDS,
      maxAttempts: v.PROCESSOR_MAX_ATTEMPTS,
      workerMemoryMb: v.PROCESSOR_WORKER_MEMORY_MB,
      workerNice: v.PROCESSOR_NICE,
      inspectorModule: v.PROCESSOR_INSPECTOR_MODULE && path.resolve(cwd, v.PROCESSOR_INSPECTOR_MODULE),
    },
    rateLimits: {
      login: v.RATE_LIMIT_LOGIN,
      register: v.RATE_LIMIT_REGISTER,
      tokenCreate: v.RATE_LIMIT_TOKEN_CREATE,
      upload: v.RATE_LIMIT_UPLOAD,
      default: v.RATE_LIMIT_DEFAULT,
    },
  };
}
