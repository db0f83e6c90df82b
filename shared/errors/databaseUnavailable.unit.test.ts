import pg from 'pg';
import { freePort } from '#tests/support/freePort';
import { databaseUnavailableError, isDatabaseUnavailable } from './databaseUnavailable';
import { ConflictError } from './httpErrors';

const withCode = (code: string, message = 'failed'): Error => Object.assign(new Error(message), { code });

test.each(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND'])(
  'socket error %s means unavailable',
  (code) => expect(isDatabaseUnavailable(withCode(code))).toBe(true),
);

test.each([
  ['08006', 'connection_failure'],
  ['08001', 'sqlclient_unable_to_establish_sqlconnection'],
  ['57P01', 'admin_shutdown'],
  ['57P02', 'crash_shutdown'],
  ['57P03', 'cannot_connect_now'],
  ['53300', 'too_many_connections'],
])('SQLSTATE %s (%s) means unavailable', (code) => expect(isDatabaseUnavailable(withCode(code))).toBe(true));

test.each([
  'Connection terminated unexpectedly',
  'Connection terminated due to connection timeout',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
])('node-postgres message "%s" means unavailable', (message) =>
  expect(isDatabaseUnavailable(new Error(message))).toBe(true),
);

test('found through a cause chain and inside an AggregateError', () => {
  expect(isDatabaseUnavailable(new Error('append failed', { cause: withCode('ECONNREFUSED') }))).toBe(true);
  expect(isDatabaseUnavailable(new AggregateError([withCode('ECONNREFUSED')], 'connect'))).toBe(true);
});

test('EventStoreDB client errors of type "unavailable"', () => {
  expect(isDatabaseUnavailable(Object.assign(new Error('14 UNAVAILABLE'), { type: 'unavailable' }))).toBe(
    true,
  );
});

test.each([
  ['a unique violation', withCode('23505', 'duplicate key')],
  ['a syntax error', withCode('42601', 'syntax error')],
  ['a statement timeout (the query, not the server)', withCode('57014', 'canceling statement')],
  ['a missing table', withCode('42P01', 'relation does not exist')],
  ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
  ['an HttpError', new ConflictError('stale')],
  ['a non-error', 'ECONNREFUSED'],
  ['null', null],
])('%s is not unavailability', (_name, error) => expect(isDatabaseUnavailable(error)).toBe(false));

test('a real refused connection is recognised', async () => {
  const port = await freePort(); // nothing listens there any more
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'x', database: 'x' });
  const error = await client.connect().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeDefined();
  expect(isDatabaseUnavailable(error)).toBe(true);
});

test('the 503 carries Retry-After and a detail', () => {
  const error = databaseUnavailableError();
  expect(error.status).toBe(503);
  expect(error.headers()).toEqual({ 'Retry-After': '5' });
  expect(error.body().detail).toMatch(/temporarily unavailable/);
});
