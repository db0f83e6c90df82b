import { randomBytes } from 'node:crypto';
import { findReservationOwner } from '#shared/commandHandling/reserveValue';
import { IdAllocator } from '#shared/commandHandling/allocateId';
import { systemContext } from '#shared/commandHandling/commandContext';
import type { EventStore } from '#shared/eventStore/eventStore';
import {
  type PostgresEventStore,
  createPostgresEventStore,
} from '#shared/eventStore/postgres/postgresEventStore';
import { InvalidFieldError } from '#shared/domain/domainErrors';
import { type Registration, registerUser } from '#services/command-api/features/accounts/registerUser';
import { createTestDatabase } from '#tests/support/testPostgres';

let connectionString: string;
let store: PostgresEventStore;
const ctx = systemContext('test');

beforeAll(async () => {
  connectionString = await createTestDatabase('register_user');
});
beforeEach(async () => {
  store = createPostgresEventStore({ connectionString, schema: `es_${randomBytes(5).toString('hex')}` });
  await store.migrate();
});
afterEach(() => store.close());

type Fault = (stream: string, phase: 'before' | 'after') => Error | undefined;

/** The real store, except that `fault` may fail an append before it runs or after it committed. */
function faulty(inner: EventStore, fault: Fault): EventStore {
  return new Proxy(inner, {
    get(target, property, receiver) {
      if (property !== 'appendToStream') return Reflect.get(target, property, receiver) as unknown;
      return async (...args: Parameters<EventStore['appendToStream']>) => {
        const before = fault(args[0], 'before');
        if (before) throw before;
        const result = await target.appendToStream(...args);
        const after = fault(args[0], 'after');
        if (after) throw after;
        return result;
      };
    },
  });
}

function registration(n: string): Registration {
  return {
    email: `person${n}@example.org`,
    username: `person${n}`,
    firstName: 'Camillo',
    lastName: 'Golgi',
    passwordHash: 'not-a-real-hash',
    isStaff: false,
  };
}

function recordingLogger() {
  const errors: { message: string; fields: Record<string, unknown> | undefined }[] = [];
  return {
    errors,
    error: (message: string, fields?: Record<string, unknown>) => errors.push({ message, fields }),
  };
}

async function owners(r: Registration) {
  return [
    await findReservationOwner(store, 'email', r.email),
    await findReservationOwner(store, 'username', r.username),
  ];
}

test('when the user append fails, the email and username are released and can be registered again', async () => {
  const r = registration('1');
  const boom = new Error('value cannot be stored');
  const broken = faulty(store, (stream, phase) =>
    stream.startsWith('user-') && phase === 'before' ? boom : undefined,
  );
  const logger = recordingLogger();
  await expect(
    registerUser({ store: broken, ids: new IdAllocator(broken), now: new Date(), logger }, r, ctx),
  ).rejects.toBe(boom);
  expect(await owners(r)).toEqual([undefined, undefined]);
  expect(logger.errors).toEqual([]);

  const { user } = await registerUser(
    { store, ids: new IdAllocator(store), now: new Date(), logger },
    r,
    ctx,
  );
  expect(await owners(r)).toEqual([`user-${user.userId}`, `user-${user.userId}`]);
});

test('a taken username gives back the email this registration reserved', async () => {
  const logger = recordingLogger();
  const deps = { store, ids: new IdAllocator(store), now: new Date(), logger };
  const first = await registerUser(deps, registration('2'), ctx);
  const clash = { ...registration('3'), username: registration('2').username };
  const failure = await registerUser(deps, clash, ctx).catch((e: unknown) => e);
  expect(failure).toBeInstanceOf(InvalidFieldError);
  expect((failure as InvalidFieldError).fields).toEqual({ username: [expect.any(String)] });
  expect(await findReservationOwner(store, 'email', clash.email)).toBeUndefined();
  expect(await findReservationOwner(store, 'username', clash.username)).toBe(`user-${first.user.userId}`);
});

test('a failing release is logged and the registration error still reaches the caller', async () => {
  const r = registration('4');
  const boom = new Error('user append failed');
  const releaseFailure = new Error('event store went away');
  let userAppendFailed = false;
  const broken = faulty(store, (stream, phase) => {
    if (phase !== 'before') return undefined;
    if (stream.startsWith('user-')) {
      userAppendFailed = true;
      return boom;
    }
    return userAppendFailed && stream.startsWith('reservation_') ? releaseFailure : undefined;
  });
  const logger = recordingLogger();
  await expect(
    registerUser({ store: broken, ids: new IdAllocator(broken), now: new Date(), logger }, r, ctx),
  ).rejects.toBe(boom);
  expect(logger.errors).toEqual([
    {
      message: 'could not release the reservations of a failed create',
      fields: expect.objectContaining({ error: releaseFailure, scopes: ['email', 'username'] }) as unknown,
    },
  ]);
});

test('an append that committed but reported failure keeps the reservations of the user it created', async () => {
  const r = registration('5');
  const lost = new Error('connection lost after commit');
  const broken = faulty(store, (stream, phase) =>
    stream.startsWith('user-') && phase === 'after' ? lost : undefined,
  );
  const logger = recordingLogger();
  await expect(
    registerUser({ store: broken, ids: new IdAllocator(broken), now: new Date(), logger }, r, ctx),
  ).rejects.toBe(lost);
  const [email, username] = await owners(r);
  expect(email).toMatch(/^user-\d+$/);
  expect(username).toBe(email);
  expect((await store.readStream(email!)).map((e) => e.type)).toEqual(['UserRegistered']);
});
