import { memoryEventStore } from '#tests/support/memoryEventStore';
import { ConflictError, InvalidFieldError } from '#shared/domain/domainErrors';
import { STREAM_FENCED } from '#shared/domain/reservation/fencing';
import { systemContext } from './commandContext';
import { createWithReservations } from './createWithReservations';
import { findReservationOwner } from './reserveValue';
import { handleCommand, toNewEvents } from './handleCommand';

const ctx = systemContext('test');
const logger = { error: jest.fn() };
const created = () => toNewEvents([{ type: 'ThingCreated', data: {} }], ctx);

function setup() {
  const store = memoryEventStore();
  return { store, deps: { store, now: new Date('2026-01-01T00:00:00Z'), logger } };
}

test('the values a create reserved are given back when the create fails', async () => {
  const { store, deps } = setup();
  const failure = await createWithReservations(deps, 'thing-1', ctx, async (reserver) => {
    await reserver.reserve('thing_name', 'Alpha', 'name', 'taken');
    expect(await reserver.tryReserve('thing_slug', 'alpha')).toBe(true);
    throw new Error('append failed');
  }).catch((e: unknown) => e);
  expect(failure).toEqual(new Error('append failed'));
  expect(await findReservationOwner(store, 'thing_name', 'alpha')).toBeUndefined();
  expect(await findReservationOwner(store, 'thing_slug', 'alpha')).toBeUndefined();
});

test('a value held by an existing aggregate is a 400 on the field, and the create keeps its own', async () => {
  const { store, deps } = setup();
  await createWithReservations(deps, 'thing-1', ctx, async (reserver) => {
    await reserver.reserve('thing_name', 'alpha', 'name', 'taken');
    await store.appendToStream('thing-1', created(), { expectedRevision: 'no_stream' });
  });
  const refused = await createWithReservations(deps, 'thing-2', ctx, async (reserver) => {
    expect(await reserver.tryReserve('thing_slug', 'beta')).toBe(true);
    await reserver.reserve('thing_name', 'ALPHA', 'name', 'taken');
  }).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(InvalidFieldError);
  expect((refused as InvalidFieldError).fields).toEqual({ name: ['taken'] });
  expect(await findReservationOwner(store, 'thing_name', 'alpha')).toBe('thing-1');
  expect(await findReservationOwner(store, 'thing_slug', 'beta')).toBeUndefined();
});

test('nothing is released when the aggregate exists after all (the append committed, then failed)', async () => {
  const { store, deps } = setup();
  const failure = await createWithReservations(deps, 'thing-3', ctx, async (reserver) => {
    await reserver.reserve('thing_name', 'gamma', 'name', 'taken');
    await store.appendToStream('thing-3', created(), { expectedRevision: 'no_stream' });
    throw new Error('connection lost after commit');
  }).catch((e: unknown) => e);
  expect(failure).toEqual(new Error('connection lost after commit'));
  expect(await findReservationOwner(store, 'thing_name', 'gamma')).toBe('thing-3');
});

describe('a holder that stalls past the grace period', () => {
  const thingDecider = {
    initialState: () => ({ exists: false }),
    evolve: () => ({ exists: true }),
  };
  const createThing = (store: ReturnType<typeof memoryEventStore>, stream: string) =>
    handleCommand(
      store,
      stream,
      thingDecider,
      (s) => (s.exists ? [] : [{ type: 'ThingCreated', data: {} }]),
      ctx,
    );

  test('is fenced: the taker gets the value, the slow create fails and gives back what it still holds', async () => {
    const { store, deps } = setup();
    let resume!: () => void;
    const stalled = new Promise<void>((resolve) => (resume = resolve));
    const slow = createWithReservations(deps, 'thing-1', ctx, async (reserver) => {
      await reserver.reserve('thing_name', 'delta', 'name', 'taken');
      await reserver.reserve('thing_slug', 'delta', 'slug', 'taken');
      await stalled;
      await createThing(store, 'thing-1');
    }).catch((e: unknown) => e);
    await new Promise((r) => setImmediate(r));

    const later = { ...deps, now: new Date(deps.now.getTime() + 61_000) };
    await createWithReservations(later, 'thing-2', ctx, async (reserver) => {
      await reserver.reserve('thing_name', 'delta', 'name', 'taken');
      await createThing(store, 'thing-2');
    });
    resume();

    expect(await slow).toBeInstanceOf(ConflictError);
    expect(await findReservationOwner(store, 'thing_name', 'delta')).toBe('thing-2');
    expect(await findReservationOwner(store, 'thing_slug', 'delta')).toBeUndefined();
    expect((await store.readStream('thing-1')).map((e) => e.type)).toEqual([STREAM_FENCED]);
    expect((await store.readStream('thing-2')).map((e) => e.type)).toEqual(['ThingCreated']);
  });

  test('that creates before the taker fences it keeps the value', async () => {
    const { store, deps } = setup();
    await createWithReservations(deps, 'thing-1', ctx, async (reserver) => {
      await reserver.reserve('thing_name', 'epsilon', 'name', 'taken');
    });
    // The holder's aggregate appears between the taker's look at it and its fence.
    const racing = {
      ...store,
      readStream: async (...args: Parameters<typeof store.readStream>) => {
        const events = await store.readStream(...args);
        if (args[0] === 'thing-1' && events.length === 0) await createThing(store, 'thing-1');
        return events;
      },
    };
    const later = { ...deps, store: racing, now: new Date(deps.now.getTime() + 61_000) };
    const refused = await createWithReservations(later, 'thing-2', ctx, async (reserver) => {
      await reserver.reserve('thing_name', 'epsilon', 'name', 'taken');
    }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InvalidFieldError);
    expect(await findReservationOwner(store, 'thing_name', 'epsilon')).toBe('thing-1');
    expect((await store.readStream('thing-1')).map((e) => e.type)).toEqual(['ThingCreated']);
  });
});
