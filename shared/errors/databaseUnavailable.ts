import { ServiceUnavailableError } from './httpErrors';

/** Socket errors that mean the server cannot be reached (refused, reset, unreachable, timed out). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs of a server that is going away or full: 57P01 admin_shutdown, 57P02 crash_shutdown,
 * 57P03 cannot_connect_now (starting up, shutting down), 53300 too_many_connections. Class 08
 * (connection exceptions) is matched by prefix.
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** What node-postgres and pg-pool say when a connection dies or cannot be had in time. */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/,
  /timeout exceeded when trying to connect/,
  /is not queryable/,
];

interface ErrorLike {
  readonly code?: unknown;
  readonly type?: unknown;
  readonly message?: unknown;
  readonly cause?: unknown;
  readonly errors?: unknown;
}

function isUnavailableItself(error: ErrorLike): boolean {
  const code = typeof error.code === 'string' ? error.code : undefined;
  if (code && (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)))
    return true;
  if (error.type === 'unavailable') return true; // EventStoreDB client: the server cannot be reached
  const message = typeof error.message === 'string' ? error.message : '';
  return UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message));
}

/**
 * True when an error means a database (PostgreSQL, EventStoreDB) is unreachable or refusing work
 * for now, as opposed to a bug or a bad request: the request may succeed if retried later. Looks
 * through `cause` chains and AggregateErrors (a connect to several addresses).
 */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 5) return false;
  const candidate = error as ErrorLike;
  if (isUnavailableItself(candidate)) return true;
  if (candidate.cause !== undefined && isDatabaseUnavailable(candidate.cause, depth + 1)) return true;
  return Array.isArray(candidate.errors) && candidate.errors.some((e) => isDatabaseUnavailable(e, depth + 1));
}

export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** The 503 a request gets while a database is unavailable. */
export function databaseUnavailableError(): ServiceUnavailableError {
  return new ServiceUnavailableError(
    'The service is temporarily unavailable: its database cannot be reached. Try again shortly.',
    UNAVAILABLE_RETRY_AFTER_SECONDS,
  );
}

/** SQLSTATE 42P01 undefined_table. */
const UNDEFINED_TABLE = '42P01';

/**
 * True when a statement named a table or view that does not exist (yet): on a first start, or a
 * query API started before any projector installed the read models, requests arrive before the
 * tables they read. Looks through `cause` chains as isDatabaseUnavailable does.
 */
export function isRelationMissing(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 5) return false;
  const candidate = error as ErrorLike;
  if (candidate.code === UNDEFINED_TABLE) return true;
  return candidate.cause !== undefined && isRelationMissing(candidate.cause, depth + 1);
}

export const NOT_READY_RETRY_AFTER_SECONDS = 1;

/** The 503 a request gets while the tables it reads are not installed yet. */
export function readModelsNotReadyError(): ServiceUnavailableError {
  return new ServiceUnavailableError(
    'The service is starting: the data this request reads is not ready yet. Try again shortly.',
    NOT_READY_RETRY_AFTER_SECONDS,
  );
}
