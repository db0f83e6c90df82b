import type { Upcaster } from '#shared/domain/upcasters';
import type { EventStore, RecordedEvent } from './eventStore';
import { START } from './eventStore';
import { upcastingEventStore } from './upcastingEventStore';

const recorded = (type: string, schemaVersion: number, data: object): RecordedEvent => ({
  id: `${type}-${schemaVersion}`,
  type,
  data,
  metadata: {
    actor: 'system',
    requestId: null,
    correlationId: 'c',
    causationId: null,
    schemaVersion,
    recordedAt: '2026-01-01T00:00:00.000Z',
  },
  streamName: 'user-1',
  streamRevision: 0n,
  position: START,
});

const events = [
  recorded('UserRegistered', 1, { name: 'Ada' }),
  recorded('UserRegistered', 2, { name: 'Bob', isStaff: true }),
];

const fakeStore: EventStore = {
  appendToStream: () => Promise.reject(new Error('not used')),
  readStream: () => Promise.resolve(events),
  readAll: () => Promise.resolve(events),
  async *subscribeToAll() {
    yield await Promise.resolve(events);
  },
  headPosition: () => Promise.resolve(START),
  close: () => Promise.resolve(),
};

const upcasters = new Map<string, Upcaster>([
  ['UserRegistered@1', (d) => ({ ...d, isStaff: false })],
  ['UserRegistered@2', (d) => ({ ...d, displayName: String(d.name) })],
]);

const expected = [
  { data: { name: 'Ada', isStaff: false, displayName: 'Ada' }, schemaVersion: 3 },
  { data: { name: 'Bob', isStaff: true, displayName: 'Bob' }, schemaVersion: 3 },
];
const shapes = (list: readonly RecordedEvent[]) =>
  list.map((e) => ({ data: e.data, schemaVersion: e.metadata.schemaVersion }));

test('streams, the global order and subscriptions all deliver the newest shape', async () => {
  const store = upcastingEventStore(fakeStore, upcasters);
  expect(shapes(await store.readStream('user-1'))).toEqual(expected);
  expect(shapes(await store.readAll())).toEqual(expected);
  for await (const batch of store.subscribeToAll()) expect(shapes(batch)).toEqual(expected);
});

test('an event already in its newest shape is passed through untouched', async () => {
  const store = upcastingEventStore(fakeStore, new Map([['Other@1', (d: Record<string, unknown>) => d]]));
  const [first] = await store.readStream('user-1');
  expect(first).toBe(events[0]);
});
