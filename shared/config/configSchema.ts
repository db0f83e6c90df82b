import { availableParallelism, totalmem } from 'node:os';
import { z } from 'zod';
import { documented, endpoint, flag, integer, list, oneOf, rateLimit, text, url } from './envVariable';

/**
 * Every environment variable the services read: type, bounds, default and meaning, in the order of
 * docs/configuration.md (generated from this object: `npm run docs:config`). zod rather than envalid
 * or convict: the value types are inferred from the schema, rules across variables (`crossChecks`)
 * sit beside the per-variable ones, and zod is maintained with no dependencies of its own.
 */

/** An inspection's base time when PROCESSOR_TIMEOUT_BASE_SECONDS is unset; it gives way to a lower cap. */
export const DEFAULT_TIMEOUT_BASE_SECONDS = 20;

/** S3 caps a presigned URL's life at 7 days. */
const MAX_PRESIGN_SECONDS = 7 * 86_400;

/** setTimeout's longest delay (2^31 − 1 ms): a longer one fires at once. */
const MAX_TIMER_SECONDS = 2_147_483;

/** A connection timeout: 0 (never) is refused, as is anything beyond an hour. */
const connectionTimeout = (fallback: number, description: string) =>
  integer({ min: 100, max: 3_600_000, default: fallback, description });

/** A host name, an IP address, ".domain" (it and its subdomains) or "*"; no scheme, port or path. */
const HOST_PATTERN =
  /^(\*|\.?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])$/i;

const trustProxy = documented(
  z
    .string()
    .transform((raw): boolean | number | string => {
      if (raw === 'false') return false;
      if (raw === 'true') return true;
      return /^\d+$/.test(raw) ? Number(raw) : raw;
    })
    .default(false),
  {
    type: '`true`, `false`, a hop count or addresses',
    default: '`false`',
    description: 'take the client address from `X-Forwarded-For` (Express `trust proxy`)',
  },
);

export const envSchema = z.object({
  PORT: integer({ min: 0, max: 65_535, default: 8000, description: 'where to listen (0: any free port)' }),
  HOST: text({ default: '0.0.0.0', description: 'the address to listen on' }),
  DATA_DIR: text({
    default: './data',
    description:
      'embedded PostgreSQL (`postgres/`, its passwords in `postgres-credentials.json`), blobs; relative to the working directory',
  }),
  DATABASE_URL: url({
    description: "external PostgreSQL, as the service's role; without it the embedded one is started",
  }),
  MIGRATION_DATABASE_URL: url({
    description:
      "with `DATABASE_URL`: the event store's owner, runs migrations (docs/security.md, The database)",
  }),
  EMBEDDED_PG_PORT: integer({
    min: 1,
    max: 65_535,
    defaultLabel: 'a free port',
    description: 'fixed port of the embedded PostgreSQL (loopback only); default: a free one at each start',
  }),
  EVENTSTORE_CONNECTION_STRING: text({
    description: 'use EventStoreDB (`esdb://…`) instead of PostgreSQL for events',
  }),
  PROCESSOR_ENABLED: flag({ default: true, description: 'whether the all-in-one runs the upload processor' }),
  PROCESSOR_CONCURRENCY: integer({
    min: 1,
    default: () => Math.max(1, availableParallelism() - 1),
    defaultLabel: 'cores − 1',
    description: 'uploads of any size inspected at once, each in its own worker thread',
  }),
  PROCESSOR_LEASE_SECONDS: integer({
    min: 1,
    default: 15,
    description:
      "how long a claim holds past its last heartbeat (renewed every third of it while working): a dead processor's upload is taken over within this time",
  }),
  PROCESSOR_SMALL_UPLOAD_SLOTS: integer({
    min: 0,
    // A small upload's inspection holds little memory: 3 slots, one less per GiB of RAM under 3.
    default: () => Math.max(1, Math.min(3, Math.floor(totalmem() / 1024 ** 3))),
    defaultLabel: '3 (1 per GiB of RAM below 3 GiB)',
    description:
      'slots for small uploads beside those of any size, always open: a small upload never waits behind big ones, and many small ones are inspected in parallel (0: none)',
  }),
  PROCESSOR_SMALL_UPLOAD_MB: integer({
    min: 0,
    default: 8,
    description: 'an upload up to this size is small',
  }),
  PROCESSOR_TIMEOUT_BASE_SECONDS: integer({
    min: 1,
    defaultLabel: `\`${DEFAULT_TIMEOUT_BASE_SECONDS}\``,
    description:
      "an inspection's time limit: this plus `PROCESSOR_TIMEOUT_PER_GIB_SECONDS` per GiB of the file, at most `PROCESSOR_TIMEOUT_SECONDS` (set, it must not exceed that)",
  }),
  PROCESSOR_TIMEOUT_PER_GIB_SECONDS: integer({
    min: 0,
    default: 300,
    description: "what each GiB of the file adds to an inspection's time limit",
  }),
  PROCESSOR_TIMEOUT_SECONDS: integer({
    min: 1,
    default: 600,
    description: 'the most an inspection may run (past its limit the upload fails, not retried)',
  }),
  PROCESSOR_MAX_ATTEMPTS: integer({
    min: 1,
    default: 3,
    description: 'runs after crashes, or claims taken back from a dead processor, before the upload fails',
  }),
  PROCESSOR_WORKER_MEMORY_MB: integer({
    min: 32,
    default: 512,
    description: 'heap limit of an inspection worker (over it: the upload fails)',
  }),
  PROCESSOR_NICE: integer({
    min: 0,
    max: 19,
    default: 10,
    description:
      'nice value of the inspection threads: how far requests go first (19 all but stops processing while requests keep the cores busy)',
  }),
  PROCESSOR_INSPECTOR_MODULE: text({
    description:
      'test only: path of a module exporting `inspectUpload`, used instead of the format readers (deterministic or slow inspectors for crash tests)',
  }),
  UPLOADER_EMAIL_VISIBILITY: oneOf(['everyone', 'owner'], {
    description:
      'who sees an uploader\'s email on brains (shape A): `everyone`, as the spec documents it, or `owner` (the uploader and staff; others get `""`)',
  }),
  LIST_CACHE_MB: integer({
    min: 0,
    default: 64,
    description:
      'memory for brains list answers kept until something they show changes (docs/search.md, "How the list stays fast"); `0` turns the cache off',
  }),
  REPLAY_CACHE_MB: integer({
    min: 0,
    default: 64,
    description:
      'memory for the events of streams the history and `as_of` replays have read, kept so that only what was appended since is read again (docs/audit.md, "Replays read each event once"); `0` reads every stream whole each time',
  }),
  SEARCH_BACKEND: oneOf(['postgres', 'elasticsearch'], {
    description: 'where brains are searched: `postgres` (the search projection) or `elasticsearch`',
  }),
  SEARCH_IN_MEMORY: flag({
    default: true,
    description:
      'whether each query API keeps the search projection in memory and answers text searches from it (docs/search.md, "The in-memory index"); `false`: every search is a PostgreSQL statement',
  }),
  ELASTICSEARCH_URL: url({
    description: 'Elasticsearch for `SEARCH_BACKEND=elasticsearch` (alias `catalogue-brains`)',
  }),
  KAFKA_BROKERS: list({
    entry: /^[^\s:/]+:\d{1,5}$/,
    entryHint: 'must be host:port entries separated by commas',
    description:
      'publish events to Kafka (`host:port,…`): the relay runs in the all-in-one, or alone with `npm run start:relay`',
  }),
  KAFKA_CLIENT_ID: text({ default: 'brain-catalogue', description: "the relay's Kafka client id" }),
  KAFKA_TOPIC_PREFIX: text({
    default: 'catalogue',
    pattern: /^[A-Za-z0-9._-]{1,200}$/,
    patternHint: "may hold letters, digits, '.', '_' and '-'",
    description: 'topics are named `<prefix>.brains`, `<prefix>.uploads`, …',
  }),
  S3_ENDPOINT: endpoint({ description: 'use S3/MinIO for files instead of local disk' }),
  S3_ACCESS_KEY: text({ description: 'with `S3_ENDPOINT`: required' }),
  S3_SECRET_KEY: text({ description: 'with `S3_ENDPOINT`: required' }),
  S3_BUCKET: text({ default: 'brain-catalogue', description: 'the bucket files are stored in' }),
  S3_REGION: text({ default: 'us-east-1', description: "the bucket's region" }),
  S3_PRESIGNED_DOWNLOADS: flag({
    default: false,
    description: 'with S3: downloads answer 302 to a presigned URL instead of being proxied',
  }),
  S3_PRESIGN_EXPIRY_SECONDS: integer({
    min: 1,
    max: MAX_PRESIGN_SECONDS,
    default: 3600,
    description: 'how long a presigned URL is valid (S3 allows 7 days at most)',
  }),
  S3_PUBLIC_ENDPOINT: endpoint({
    defaultLabel: '`S3_ENDPOINT`',
    description: "the store's address as clients reach it (presigned URLs are signed for it)",
  }),
  ADMIN_EMAIL: text({
    description: 'staff account ensured at every start (idempotent); needs `ADMIN_PASSWORD`',
  }),
  ADMIN_PASSWORD: text({ description: "the staff account's password, at least 8 characters" }),
  ADMIN_USERNAME: text({
    defaultLabel: "the email's local part",
    description: "the staff account's username",
  }),
  LOGIN_TOKEN_TTL_DAYS: integer({ min: 1, default: 30, description: 'lifetime of login tokens' }),
  PASSWORD_HASH_LOG_N: integer({ min: 4, default: 15, description: 'scrypt cost (2^N); tests use 10' }),
  JSON_BODY_LIMIT_BYTES: integer({
    min: 1024,
    default: 1024 * 1024,
    description: 'largest JSON body (413 beyond)',
  }),
  MAX_AVATAR_BYTES: integer({
    min: 1,
    default: 5 * 1024 ** 2,
    description: 'largest avatar image (413 beyond)',
  }),
  MAX_IMAGE_PIXELS: integer({
    min: 1,
    // Pillow's default decompression-bomb bound is 89 megapixels; an uploaded image needs far less.
    default: 50_000_000,
    description: 'largest uploaded image, width × height (400 beyond: decompression bombs)',
  }),
  MAX_UPLOAD_BYTES: integer({
    min: 1,
    default: 5 * 1024 ** 3,
    description: 'largest scan upload (413 while streaming, nothing kept)',
  }),
  BLOB_DIRECT_IO: flag({
    default: true,
    description:
      'local disk: write uploads with `O_DIRECT` where the file system allows (docs/uploads-and-processing.md); `false`: through the page cache',
  }),
  BLOB_SWEEP_ENABLED: flag({
    default: true,
    description:
      'the all-in-one and the command API sweep the blob store at start and every `BLOB_SWEEP_INTERVAL_SECONDS`, one instance at a time (docs/uploads-and-processing.md)',
  }),
  BLOB_SWEEP_INTERVAL_SECONDS: integer({
    min: 1,
    max: MAX_TIMER_SECONDS,
    default: 3600,
    description: 'time between two sweeps',
  }),
  BLOB_SWEEP_LEFTOVER_GRACE_SECONDS: integer({
    min: 1,
    default: 3600,
    description:
      'a temp file of a killed upload (S3: an incomplete multipart upload) untouched this long is removed',
  }),
  BLOB_SWEEP_ORPHAN_GRACE_SECONDS: integer({
    min: 1,
    default: 86_400,
    description:
      'a blob no record names is removed once stored this long ago: keep it longer than any upload takes',
  }),
  TUS_EXPIRY_SECONDS: integer({
    min: 1,
    default: 86_400,
    description:
      'a resumable (tus) upload not finished this long after its creation expires (`Upload-Expires`; then 410) and is removed with its bytes',
  }),
  TUS_CLEANUP_INTERVAL_SECONDS: integer({
    min: 1,
    max: MAX_TIMER_SECONDS,
    default: 600,
    description: 'time between two removals of expired tus uploads (one instance at a time)',
  }),
  TUS_LOCK_WAIT_MS: integer({
    min: 0,
    max: 600_000,
    default: 5_000,
    description:
      'how long a tus request waits for another request (any instance) to finish with the same upload before 423',
  }),
  TUS_LOCK_CONNECTIONS: integer({
    min: 1,
    max: 1_000,
    default: 64,
    description:
      'PostgreSQL connections holding the per-upload locks: at most this many tus requests at once per instance',
  }),
  TUS_S3_PART_SIZE_BYTES: integer({
    min: 5 * 1024 ** 2,
    max: 5 * 1024 ** 3,
    default: 16 * 1024 ** 2,
    description: 'S3: preferred size of the multipart upload parts a tus upload is sent to the bucket in',
  }),
  TUS_CHECKSUM_MAX_BYTES: integer({
    min: 1,
    default: 64 * 1024 ** 2,
    description:
      'S3: largest tus request body with `Upload-Checksum` (held in memory until it matches; 413 beyond); local disk: no bound',
  }),
  RATE_LIMIT_LOGIN: rateLimit('10/minute', {
    description: 'per client address; password changes count too, and per user',
  }),
  RATE_LIMIT_REGISTER: rateLimit('20/hour', { description: 'per client address' }),
  RATE_LIMIT_TOKEN_CREATE: rateLimit('30/hour', { description: 'per user' }),
  RATE_LIMIT_UPLOAD: rateLimit('120/hour', { description: 'per user' }),
  RATE_LIMIT_DEFAULT: rateLimit('600/minute', {
    description:
      'every request, reads and writes in one bucket, per user (per address when anonymous); counted in PostgreSQL across all processes, so set it identically on every one',
  }),
  TRUST_PROXY: trustProxy,
  PUBLIC_BASE_URL: url({
    description: 'base of emitted links; else the Host if allowed or loopback/own name, else socket addr',
  }),
  ALLOWED_HOSTS: list({
    entry: HOST_PATTERN,
    entryHint: 'must list host names (without scheme or port)',
    lowerCase: true,
    defaultLabel: 'any',
    description:
      'hosts served, comma-separated (`a.org`, `.a.org` = +subdomains, `*`); others: 400; unset: any, with links kept to this machine',
  }),
  READ_YOUR_WRITES_TIMEOUT_MS: integer({
    min: 0,
    default: 5000,
    description: 'how long a write waits for the read models',
  }),
  HTTP_HEADERS_TIMEOUT_MS: connectionTimeout(
    20_000,
    'most time for a request line and its headers, in total (408 JSON, connection closed)',
  ),
  HTTP_BODY_TIMEOUT_MS: connectionTimeout(
    30_000,
    'longest silence in a body, and all a JSON or form body may take (408 JSON, closed); an upload that keeps sending has no total',
  ),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: connectionTimeout(
    5_000,
    "how long a kept-alive connection may wait for its next request; all three stay below the gateway's (nginx: 60 s by default)",
  ),
  HEALTH_MAX_PROJECTION_LAG_SECONDS: integer({
    min: 1,
    default: 30,
    description: '`/health/` fails when the oldest event not yet in the read models is older than this',
  }),
  LEDGER_HEAD_LOG_INTERVAL_SECONDS: integer({
    min: 0,
    max: MAX_TIMER_SECONDS,
    default: 300,
    description:
      'the leading projector logs the ledger head (position, count, hash) once caught up, then at this interval: a copy outside the database; `0`: never',
  }),
  LOG_LEVEL: oneOf(['info', 'debug', 'warn', 'error', 'silent'], {
    description: 'logs are JSON lines with the request id',
  }),
  FAULT_INJECT_CRASH_AFTER_COMMIT: flag({
    default: false,
    description:
      'test only: the process kills itself right after a write carrying an `Idempotency-Key` has committed, before answering',
  }),
});

export type EnvValues = z.output<typeof envSchema>;

type Issue = { readonly variable: keyof EnvValues; readonly message: string };

/** The rules that take more than one variable. */
export function crossChecks(values: EnvValues): Issue[] {
  const issues: Issue[] = [];
  const check = (broken: boolean, variable: keyof EnvValues, message: string) => {
    if (broken) issues.push({ variable, message });
  };
  check(
    values.MIGRATION_DATABASE_URL !== undefined && values.DATABASE_URL === undefined,
    'MIGRATION_DATABASE_URL',
    'needs DATABASE_URL (the embedded PostgreSQL has its own roles)',
  );
  check(
    values.SEARCH_BACKEND === 'elasticsearch' && values.ELASTICSEARCH_URL === undefined,
    'SEARCH_BACKEND',
    'elasticsearch needs ELASTICSEARCH_URL',
  );
  check(
    values.S3_PRESIGNED_DOWNLOADS && values.S3_ENDPOINT === undefined,
    'S3_PRESIGNED_DOWNLOADS',
    'needs S3_ENDPOINT (the local disk store cannot presign)',
  );
  for (const key of ['S3_ACCESS_KEY', 'S3_SECRET_KEY'] as const)
    check(values.S3_ENDPOINT !== undefined && !values[key], key, 'is required when S3_ENDPOINT is set');
  const admin = values.ADMIN_EMAIL ?? values.ADMIN_PASSWORD ?? values.ADMIN_USERNAME;
  check(admin !== undefined && !values.ADMIN_EMAIL, 'ADMIN_EMAIL', 'is required when any ADMIN_* is set');
  check(
    admin !== undefined && !values.ADMIN_PASSWORD,
    'ADMIN_PASSWORD',
    'is required when any ADMIN_* is set',
  );
  check((values.ADMIN_PASSWORD?.length ?? 8) < 8, 'ADMIN_PASSWORD', 'must have at least 8 characters');
  check(
    (values.PROCESSOR_TIMEOUT_BASE_SECONDS ?? 0) > values.PROCESSOR_TIMEOUT_SECONDS,
    'PROCESSOR_TIMEOUT_BASE_SECONDS',
    `must not exceed PROCESSOR_TIMEOUT_SECONDS, the most any inspection may run; got "${values.PROCESSOR_TIMEOUT_BASE_SECONDS}"`,
  );
  return issues;
}
