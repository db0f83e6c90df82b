import { randomBytes } from 'node:crypto';
import { IdAllocator } from '#shared/commandHandling/allocateId';
import { systemContext } from '#shared/commandHandling/commandContext';
import { loadAggregate } from '#shared/commandHandling/handleCommand';
import { findReservationOwner } from '#shared/commandHandling/reserveValue';
import { createPasswordHasher } from '#shared/auth/passwords';
import { userDecider } from '#shared/domain/accounts/events';
import {
  type PostgresEventStore,
  createPostgresEventStore,
} from '#shared/eventStore/postgres/postgresEventStore';
import { ensureStaffAccount } from '#services/command-api/features/accounts/ensureStaffAccount';
import { createTestDatabase } from '#tests/support/testPostgres';

/** Processes started together with the same ADMIN_*: each has its own store (pool) on one database. */
const PROCESSES = 4;

let connectionString: string;
let stores: PostgresEventStore[] = [];
const passwords = createPasswordHasher(10);
const logger = { error: () => undefined, warn: () => undefined };
const account = { email: 'ops@example.org', password: 'a-long-password', username: 'ops' };

beforeAll(async () => {
  connectionString = await createTestDatabase('ensure_staff');
});
beforeEach(async () => {
  const schema = `es_${randomBytes(5).toString('hex')}`;
  stores = Array.from({ length: PROCESSES }, () => createPostgresEventStore({ connectionString, schema }));
  await stores[0]!.migrate();
});
afterEach(() => Promise.all(stores.map((store) => store.close())));

function ensureIn(store: PostgresEventStore, password = account.password) {
  return ensureStaffAccount(
    { store, ids: new IdAllocator(store), passwords, now: () => new Date(), logger },
    { ...account, password },
    systemContext('ensure-admin'),
  );
}

test('processes ensuring the same staff account at once all succeed, with one account between them', async () => {
  for (let round = 0; round < 3; round += 1) {
    const email = `ops${round}@example.org`;
    const results = await Promise.all(
      stores.map((store) =>
        ensureStaffAccount(
          { store, ids: new IdAllocator(store), passwords, now: () => new Date(), logger },
          { ...account, email, username: `ops${round}` },
          systemContext('ensure-admin'),
        ),
      ),
    );
    expect(new Set(results.map((result) => result.userId)).size).toBe(1);
    expect(results.filter((result) => result.created)).toHaveLength(1);
    const owner = await findReservationOwner(stores[0]!, 'email', email);
    const { state } = await loadAggregate(stores[0]!, owner!, userDecider);
    expect(state).toMatchObject({ status: 'registered', userId: results[0]!.userId, isStaff: true });
  }
});

test('a second ensure with a new password updates the one account (no duplicate, no error)', async () => {
  const first = await ensureIn(stores[0]!);
  const again = await Promise.all(stores.map((store) => ensureIn(store, 'another-long-password')));
  expect(again.map((result) => result)).toEqual(again.map(() => ({ userId: first.userId, created: false })));
  const owner = await findReservationOwner(stores[0]!, 'email', account.email);
  const { state } = await loadAggregate(stores[0]!, owner!, userDecider);
  expect(
    state.status === 'registered' && (await passwords.verify(state.passwordHash, 'another-long-password')),
  ).toBe(true);
});
