import path from 'node:path';
import { DEFAULT_TIMEOUT_BASE_SECONDS, crossChecks, envSchema, type EnvValues } from './configSchema';
import type { Endpoint, RateLimitRule } from './envVariable';

export type { RateLimitRule } from './envVariable';

/**
 * The one place where environment variables become configuration. Every service's main.ts calls
 * loadConfig(process.env); the variables are declared, bounded and described once in
 * ./configSchema, and a bad value stops start-up with a message naming the variable.
 */

export interface Config {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  /**
   * BLOB_DIRECT_IO: the local disk BlobStore writes uploads around the page cache (O_DIRECT) where
   * the file system allows; true by default.
   */
  readonly blobDirectIo: boolean;
  /** BLOB_SWEEP_*: the sweep of leftovers of killed writes and of orphaned blobs (shared/blobSweep). */
  readonly blobSweep: BlobSweepConfig;
  /** External PostgreSQL; when absent the all-in-one starts an embedded one in dataDir/postgres. */
  readonly databaseUrl: string | undefined;
  /**
   * The role that owns the event store and runs its migrations, when DATABASE_URL's role should not
   * (least privilege); absent: DATABASE_URL migrates too.
   */
  readonly migrationDatabaseUrl: string | undefined;
  /** Absent: a free port is chosen at each start, so several all-in-ones can run side by side. */
  readonly embeddedPostgresPort: number | undefined;
  readonly eventStoreConnectionString: string | undefined;
  readonly s3: S3Config | undefined;
  readonly elasticsearchUrl: string | undefined;
  /** SEARCH_BACKEND: where the brains list searches (postgres, the default, or elasticsearch). */
  readonly searchBackend: 'postgres' | 'elasticsearch';
  /** Who sees an uploader's email on brains (shape A): everyone (the spec), or the uploader and staff. */
  readonly uploaderEmailVisibility: 'everyone' | 'owner';
  /** LIST_CACHE_MB: memory for brains list answers kept until a change they show (0: none). */
  readonly listCacheBytes: number;
  /** KAFKA_BROKERS: the relay publishes events to Kafka (unset: no relay runs). */
  readonly kafka: KafkaConfig | undefined;
  readonly admin: { email: string; password: string; username: string } | undefined;
  readonly loginTokenTtlMs: number;
  readonly passwordHashLogN: number;
  readonly jsonBodyLimitBytes: number;
  readonly maxUploadBytes: number;
  readonly maxAvatarBytes: number;
  /** Bound of an uploaded image's width × height (a small file can announce gigapixels). */
  readonly maxImagePixels: number;
  readonly trustProxy: boolean | number | string;
  readonly publicBaseUrl: string | undefined;
  /** ALLOWED_HOSTS: host names the API answers to; empty means any, with links kept to this machine. */
  readonly allowedHosts: readonly string[];
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  readonly readYourWritesTimeoutMs: number;
  /** HTTP_HEADERS_TIMEOUT_MS, HTTP_BODY_TIMEOUT_MS, HTTP_KEEP_ALIVE_TIMEOUT_MS (shared/http/connectionTimeouts). */
  readonly httpTimeouts: HttpTimeoutsConfig;
  /**
   * TEST-ONLY (FAULT_INJECT_CRASH_AFTER_COMMIT=1): the process SIGKILLs itself right after a write
   * carrying an Idempotency-Key has committed, before answering, to prove that a retry replays it.
   */
  readonly faultInjectCrashAfterCommit: boolean;
  /** /health/ fails when the oldest event the live read models have not applied is older than this. */
  readonly healthMaxProjectionLagSeconds: number;
  readonly processor: ProcessorConfig;
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

/** The upload processor (services/processor), alone or inside the all-in-one. */
export interface ProcessorConfig {
  /** PROCESSOR_ENABLED: whether the all-in-one runs a processor (the standalone one always does). */
  readonly enabled: boolean;
  /** A claim holds an upload this long unless renewed; then another processor may take it back. */
  readonly leaseSeconds: number;
  /** Uploads of any size processed at once, each in its own worker thread (default: cores − 1). */
  readonly concurrency: number;
  /**
   * PROCESSOR_SMALL_UPLOAD_SLOTS: slots beside `concurrency` for small uploads, one open for each slot
   * a big upload holds, so that a small upload never waits behind big ones (0: none).
   */
  readonly smallUploadSlots: number;
  /** PROCESSOR_SMALL_UPLOAD_MB: an upload up to this size is small. */
  readonly smallUploadMaxBytes: number;
  /**
   * An inspection's time limit is `timeoutBaseSeconds` plus `timeoutPerGibSeconds` per GiB of the
   * file, at most `timeoutSeconds`; a worker past it is terminated and the upload fails (not retried).
   */
  readonly timeoutSeconds: number;
  readonly timeoutBaseSeconds: number;
  readonly timeoutPerGibSeconds: number;
  /** Runs of a crashed worker, or claims taken back from a dead processor, before the upload fails. */
  readonly maxAttempts: number;
  /** Heap limit of each worker thread. */
  readonly workerMemoryMb: number;
  /**
   * Nice value of the worker threads, 0 to 19: under contention requests go first, and processing
   * still gets a share (19 would all but stop it while the cores are busy with requests).
   */
  readonly workerNice: number;
  /**
   * TEST-ONLY (PROCESSOR_INSPECTOR_MODULE): absolute path of a module exporting `inspectUpload`,
   * used instead of shared/formats (a deterministic or slow inspector for crash tests).
   */
  readonly inspectorModule: string | undefined;
}

export interface BlobSweepConfig {
  /** BLOB_SWEEP_ENABLED (default true): the all-in-one and the command API sweep the blob store. */
  readonly enabled: boolean;
  /** BLOB_SWEEP_INTERVAL_SECONDS (default 3600): between sweeps; the first runs at start. */
  readonly intervalMs: number;
  /** BLOB_SWEEP_LEFTOVER_GRACE_SECONDS (default 3600): a temp file untouched this long is no write in progress. */
  readonly leftoverGraceMs: number;
  /**
   * BLOB_SWEEP_ORPHAN_GRACE_SECONDS (default 86400): a blob no record names is removed once stored
   * this long ago; longer than any upload takes (on S3 a blob's age runs from its upload's start).
   */
  readonly orphanGraceMs: number;
}

export interface KafkaConfig {
  readonly brokers: readonly string[];
  /** KAFKA_CLIENT_ID (default brain-catalogue). */
  readonly clientId: string;
  /** KAFKA_TOPIC_PREFIX (default catalogue): topics catalogue.brains, catalogue.uploads, … */
  readonly topicPrefix: string;
}

export interface S3Config {
  readonly endPoint: string;
  readonly port: number;
  readonly useSSL: boolean;
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
    uploaderEmailVisibility: v.UPLOADER_EMAIL_VISIBILITY,
    listCacheBytes: v.LIST_CACHE_MB * MIB,
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
