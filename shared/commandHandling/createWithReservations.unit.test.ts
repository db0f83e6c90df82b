import { memoryEventStore } from '../../tests/support/memoryEventStore';
import { ValidationError } from '../errors/httpErrors';
import { systemContext } from './commandContext';
import { createWithReservations } from './createWithReservations';
import { findReservationOwner } from './reserveValue';
import { toNewEvents } from './handleCommand';

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
  expect(refused).toBeInstanceOf(ValidationError);
  expect((refused as ValidationError).fields).toEqual({ name: ['taken'] });
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
