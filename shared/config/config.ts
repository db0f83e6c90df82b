import { availableParallelism } from 'node:os';
import path from 'node:path';
import { DEFAULT_MAX_IMAGE_PIXELS } from '#shared/media/checkImage';

/**
 * The one place where environment variables become configuration. Every service's main.ts calls
 * loadConfig(process.env); a bad value stops start-up with a message naming the variable.
 */
export interface RateLimitRule {
  readonly limit: number;
  readonly windowMs: number;
}

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
  readonly publicEndpoint:
    { readonly endPoint: string; readonly port: number; readonly useSSL: boolean } | undefined;
}

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

const PERIODS: Record<string, number> = { second: 1_000, minute: 60_000, hour: 3_600_000, day: 86_400_000 };

function int(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min)
    throw new ConfigError(name, `must be an integer >= ${min}, got "${raw}"`);
  return Number(raw);
}

/** A connection timeout: 0 (never) is refused, as is anything beyond an hour. */
function timeoutMs(env: Env, name: string, fallback: number): number {
  const ms = int(env, name, fallback, 100);
  if (ms > 3_600_000) throw new ConfigError(name, `must be at most 3600000 (an hour), got "${env[name]}"`);
  return ms;
}

function kafka(env: Env): KafkaConfig | undefined {
  const brokers = (env.KAFKA_BROKERS ?? '')
    .split(',')
    .map((broker) => broker.trim())
    .filter(Boolean);
  if (brokers.length === 0) return undefined;
  for (const broker of brokers)
    if (!/^[^\s:/]+:\d{1,5}$/.test(broker))
      throw new ConfigError(
        'KAFKA_BROKERS',
        `must be host:port entries separated by commas, got "${broker}"`,
      );
  const topicPrefix = env.KAFKA_TOPIC_PREFIX || 'catalogue';
  if (!/^[A-Za-z0-9._-]{1,200}$/.test(topicPrefix))
    throw new ConfigError(
      'KAFKA_TOPIC_PREFIX',
      `may hold letters, digits, '.', '_' and '-', got "${topicPrefix}"`,
    );
  return { brokers, clientId: env.KAFKA_CLIENT_ID || 'brain-catalogue', topicPrefix };
}

function blobSweep(env: Env): BlobSweepConfig {
  const second = PERIODS.second!;
  return {
    enabled: env.BLOB_SWEEP_ENABLED ? flag(env, 'BLOB_SWEEP_ENABLED') : true,
    intervalMs: int(env, 'BLOB_SWEEP_INTERVAL_SECONDS', 3600, 1) * second,
    leftoverGraceMs: int(env, 'BLOB_SWEEP_LEFTOVER_GRACE_SECONDS', 3600, 1) * second,
    orphanGraceMs: int(env, 'BLOB_SWEEP_ORPHAN_GRACE_SECONDS', 86_400, 1) * second,
  };
}

/** PROCESSOR_TIMEOUT_BASE_SECONDS: set above the cap, PROCESSOR_TIMEOUT_SECONDS, it would never apply. */
function timeoutBase(env: Env): number {
  const base = int(env, 'PROCESSOR_TIMEOUT_BASE_SECONDS', 20, 1);
  if (env.PROCESSOR_TIMEOUT_BASE_SECONDS && base > int(env, 'PROCESSOR_TIMEOUT_SECONDS', 600, 1))
    throw new ConfigError(
      'PROCESSOR_TIMEOUT_BASE_SECONDS',
      `must not exceed PROCESSOR_TIMEOUT_SECONDS, the most any inspection may run; got "${env.PROCESSOR_TIMEOUT_BASE_SECONDS}"`,
    );
  return base;
}

/** A Linux nice value a process may lower itself to: 0 (as the requests) to 19 (only when idle). */
function niceValue(env: Env, name: string, fallback: number): number {
  const nice = int(env, name, fallback);
  if (nice > 19) throw new ConfigError(name, `must be a nice value from 0 to 19, got "${env[name]}"`);
  return nice;
}

function optionalPort(env: Env, name: string): number | undefined {
  if (!env[name]) return undefined;
  const port = int(env, name, 0, 1);
  if (port > 65_535) throw new ConfigError(name, `must be a port number (1-65535), got "${env[name]}"`);
  return port;
}

function migrationDatabaseUrl(env: Env): string | undefined {
  const raw = url(env, 'MIGRATION_DATABASE_URL');
  if (raw && !env.DATABASE_URL)
    throw new ConfigError(
      'MIGRATION_DATABASE_URL',
      'needs DATABASE_URL (the embedded PostgreSQL has its own roles)',
    );
  return raw;
}

function url(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  try {
    new URL(raw);
  } catch {
    throw new ConfigError(name, `must be a URL, got "${raw}"`);
  }
  return raw;
}

/** "10/minute", "20/hour", "600/min". */
function rule(env: Env, name: string, fallback: RateLimitRule): RateLimitRule {
  const raw = env[name];
  if (!raw) return fallback;
  const match = /^(\d+)\s*\/\s*(second|sec|s|minute|min|m|hour|h|day|d)$/.exec(raw.trim());
  if (!match) throw new ConfigError(name, `must look like "10/minute", got "${raw}"`);
  const unit =
    { sec: 'second', s: 'second', min: 'minute', m: 'minute', h: 'hour', d: 'day' }[match[2]!] ?? match[2]!;
  return { limit: Number(match[1]), windowMs: PERIODS[unit]! };
}

function trustProxy(env: Env): boolean | number | string {
  const raw = env.TRUST_PROXY;
  if (!raw || raw === 'false') return false;
  if (raw === 'true') return true;
  return /^\d+$/.test(raw) ? Number(raw) : raw;
}

function endpointOf(raw: string): { endPoint: string; port: number; useSSL: boolean } {
  const parsed = new URL(raw);
  return {
    endPoint: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80,
    useSSL: parsed.protocol === 'https:',
  };
}

/** S3 caps a presigned URL's life at 7 days. */
const MAX_PRESIGN_SECONDS = 7 * 86_400;

function presignedDownloads(env: Env): PresignedDownloadConfig | undefined {
  const publicEndpoint = url(env, 'S3_PUBLIC_ENDPOINT');
  if (!flag(env, 'S3_PRESIGNED_DOWNLOADS')) return undefined;
  const expirySeconds = int(env, 'S3_PRESIGN_EXPIRY_SECONDS', 3600, 1);
  if (expirySeconds > MAX_PRESIGN_SECONDS)
    throw new ConfigError('S3_PRESIGN_EXPIRY_SECONDS', `must be at most ${MAX_PRESIGN_SECONDS} (7 days)`);
  return { expirySeconds, publicEndpoint: publicEndpoint ? endpointOf(publicEndpoint) : undefined };
}

function s3(env: Env): S3Config | undefined {
  const endpoint = url(env, 'S3_ENDPOINT');
  if (!endpoint) {
    if (flag(env, 'S3_PRESIGNED_DOWNLOADS'))
      throw new ConfigError(
        'S3_PRESIGNED_DOWNLOADS',
        'needs S3_ENDPOINT (the local disk store cannot presign)',
      );
    return undefined;
  }
  const parsed = new URL(endpoint);
  const need = (name: string): string => {
    const v = env[name];
    if (!v) throw new ConfigError(name, 'is required when S3_ENDPOINT is set');
    return v;
  };
  return {
    endPoint: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80,
    useSSL: parsed.protocol === 'https:',
    accessKey: need('S3_ACCESS_KEY'),
    secretKey: need('S3_SECRET_KEY'),
    bucket: env.S3_BUCKET ?? 'brain-catalogue',
    region: env.S3_REGION ?? 'us-east-1',
    presignedDownloads: presignedDownloads(env),
  };
}

/** A host name, an IP address, ".domain" (it and its subdomains) or "*"; no scheme, port or path. */
const HOST_PATTERN =
  /^(\*|\.?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])$/i;

function allowedHosts(env: Env): string[] {
  const entries = (env.ALLOWED_HOSTS ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  const bad = entries.find((h) => !HOST_PATTERN.test(h));
  if (bad !== undefined)
    throw new ConfigError('ALLOWED_HOSTS', `must list host names (without scheme or port), got "${bad}"`);
  return entries.map((h) => h.toLowerCase());
}

function admin(env: Env): Config['admin'] {
  const { ADMIN_EMAIL: email, ADMIN_PASSWORD: password, ADMIN_USERNAME: username } = env;
  if (!email && !password && !username) return undefined;
  if (!email || !password)
    throw new ConfigError(email ? 'ADMIN_PASSWORD' : 'ADMIN_EMAIL', 'is required when any ADMIN_* is set');
  if (password.length < 8) throw new ConfigError('ADMIN_PASSWORD', 'must have at least 8 characters');
  return { email, password, username: username ?? email.split('@')[0]! };
}

function flag(env: Env, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === '0' || raw === 'false') return false;
  if (raw === '1' || raw === 'true') return true;
  throw new ConfigError(name, `must be 1, 0, true or false, got "${raw}"`);
}

function searchBackend(env: Env): Config['searchBackend'] {
  const raw = env.SEARCH_BACKEND || 'postgres';
  if (raw !== 'postgres' && raw !== 'elasticsearch')
    throw new ConfigError('SEARCH_BACKEND', `must be postgres or elasticsearch, got "${raw}"`);
  if (raw === 'elasticsearch' && !env.ELASTICSEARCH_URL)
    throw new ConfigError('SEARCH_BACKEND', 'elasticsearch needs ELASTICSEARCH_URL');
  return raw;
}

/** One of `allowed` (the first is the default). */
function oneOf<T extends string>(env: Env, name: string, allowed: readonly [T, ...T[]]): T {
  const raw = env[name] || allowed[0];
  if (!(allowed as readonly string[]).includes(raw))
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  return raw as T;
}

function logLevel(env: Env): Config['logLevel'] {
  const raw = env.LOG_LEVEL ?? 'info';
  if (!['debug', 'info', 'warn', 'error', 'silent'].includes(raw))
    throw new ConfigError('LOG_LEVEL', `is not a level: "${raw}"`);
  return raw as Config['logLevel'];
}

export function loadConfig(env: Env, cwd = process.cwd()): Config {
  const minute = PERIODS.minute!;
  const hour = PERIODS.hour!;
  return {
    host: env.HOST ?? '0.0.0.0',
    port: int(env, 'PORT', 8000),
    dataDir: path.resolve(cwd, env.DATA_DIR ?? './data'),
    blobDirectIo: env.BLOB_DIRECT_IO ? flag(env, 'BLOB_DIRECT_IO') : true,
    blobSweep: blobSweep(env),
    databaseUrl: url(env, 'DATABASE_URL'),
    migrationDatabaseUrl: migrationDatabaseUrl(env),
    embeddedPostgresPort: optionalPort(env, 'EMBEDDED_PG_PORT'),
    eventStoreConnectionString: env.EVENTSTORE_CONNECTION_STRING || undefined,
    s3: s3(env),
    elasticsearchUrl: url(env, 'ELASTICSEARCH_URL'),
    searchBackend: searchBackend(env),
    uploaderEmailVisibility: oneOf(env, 'UPLOADER_EMAIL_VISIBILITY', ['everyone', 'owner'] as const),
    listCacheBytes: int(env, 'LIST_CACHE_MB', 64, 0) * 1024 * 1024,
    kafka: kafka(env),
    admin: admin(env),
    loginTokenTtlMs: int(env, 'LOGIN_TOKEN_TTL_DAYS', 30, 1) * PERIODS.day!,
    passwordHashLogN: int(env, 'PASSWORD_HASH_LOG_N', 15, 4),
    jsonBodyLimitBytes: int(env, 'JSON_BODY_LIMIT_BYTES', 1024 * 1024, 1024),
    maxUploadBytes: int(env, 'MAX_UPLOAD_BYTES', 5 * 1024 ** 3, 1),
    maxAvatarBytes: int(env, 'MAX_AVATAR_BYTES', 5 * 1024 ** 2, 1),
    maxImagePixels: int(env, 'MAX_IMAGE_PIXELS', DEFAULT_MAX_IMAGE_PIXELS, 1),
    trustProxy: trustProxy(env),
    publicBaseUrl: url(env, 'PUBLIC_BASE_URL')?.replace(/\/$/, ''),
    allowedHosts: allowedHosts(env),
    logLevel: logLevel(env),
    readYourWritesTimeoutMs: int(env, 'READ_YOUR_WRITES_TIMEOUT_MS', 5000, 0),
    httpTimeouts: {
      headersTimeoutMs: timeoutMs(env, 'HTTP_HEADERS_TIMEOUT_MS', 20_000),
      bodyTimeoutMs: timeoutMs(env, 'HTTP_BODY_TIMEOUT_MS', 30_000),
      keepAliveTimeoutMs: timeoutMs(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 5_000),
    },
    faultInjectCrashAfterCommit: flag(env, 'FAULT_INJECT_CRASH_AFTER_COMMIT'),
    healthMaxProjectionLagSeconds: int(env, 'HEALTH_MAX_PROJECTION_LAG_SECONDS', 30, 1),
    processor: {
      enabled: env.PROCESSOR_ENABLED ? flag(env, 'PROCESSOR_ENABLED') : true,
      leaseSeconds: int(env, 'PROCESSOR_LEASE_SECONDS', 60, 1),
      concurrency: int(env, 'PROCESSOR_CONCURRENCY', Math.max(1, availableParallelism() - 1), 1),
      smallUploadSlots: int(env, 'PROCESSOR_SMALL_UPLOAD_SLOTS', 1, 0),
      smallUploadMaxBytes: int(env, 'PROCESSOR_SMALL_UPLOAD_MB', 8, 0) * 1024 * 1024,
      timeoutSeconds: int(env, 'PROCESSOR_TIMEOUT_SECONDS', 600, 1),
      timeoutBaseSeconds: timeoutBase(env),
      timeoutPerGibSeconds: int(env, 'PROCESSOR_TIMEOUT_PER_GIB_SECONDS', 300, 0),
      maxAttempts: int(env, 'PROCESSOR_MAX_ATTEMPTS', 3, 1),
      workerMemoryMb: int(env, 'PROCESSOR_WORKER_MEMORY_MB', 512, 32),
      workerNice: niceValue(env, 'PROCESSOR_NICE', 10),
      inspectorModule: env.PROCESSOR_INSPECTOR_MODULE
        ? path.resolve(cwd, env.PROCESSOR_INSPECTOR_MODULE)
        : undefined,
    },
    rateLimits: {
      login: rule(env, 'RATE_LIMIT_LOGIN', { limit: 10, windowMs: minute }),
      register: rule(env, 'RATE_LIMIT_REGISTER', { limit: 20, windowMs: hour }),
      tokenCreate: rule(env, 'RATE_LIMIT_TOKEN_CREATE', { limit: 30, windowMs: hour }),
      upload: rule(env, 'RATE_LIMIT_UPLOAD', { limit: 120, windowMs: hour }),
      default: rule(env, 'RATE_LIMIT_DEFAULT', { limit: 600, windowMs: minute }),
    },
  };
}
