import { randomUUID } from 'node:crypto';
import {
  type EventStore,
  type GlobalPosition,
  type ReadStreamOptions,
  type RecordedEvent,
} from '#shared/eventStore/eventStore';
import { StreamCache } from '#shared/audit/replay/streamCache';
import { eventStoreDatabase } from '#tests/support/eventStoreDatabase';
import { seededRandom } from '#tests/support/seededRandom';

/**
 * The replays' stream cache answers every read exactly as the PostgreSQL store does at that moment
 * (the same events, in the same order), whatever the options, while streams keep growing; and a
 * read it can answer from what it keeps sends no query.
 */
const db = eventStoreDatabase('stream_cache');

const STREAMS = ['brain-1', 'brain-2', 'species-7', 'no-such-stream'];

function newEvent(n: number): Parameters<EventStore['appendToStream']>[1][number] {
  return {
    id: randomUUID(),
    type: 'BrainUpdated',
    data: { brainId: n, changes: { name: `revision ${n} é 😀` } },
    metadata: { actor: '1', requestId: randomUUID(), correlationId: randomUUID(), causationId: null, schemaVersion: 1 },
  };
}

/** A store whose reads are counted: what the cache asked of it. */
function counted(store: EventStore): { store: EventStore; reads: () => number } {
  let reads = 0;
  return {
    store: {
      ...store,
      readStream: (name, options) => {
        reads++;
        return store.readStream(name, options);
      },
      headPosition: () => {
        reads++;
        return store.headPosition();
      },
    },
    reads: () => reads,
  };
}

const ids = (events: readonly RecordedEvent[]): string[] => events.map((e) => e.id);

/** Random options drawn from what the stream holds: revisions, positions and times of its events, and beyond. */
function randomOptions(known: readonly RecordedEvent[], random: () => number): ReadStreamOptions {
  const pick = <T>(values: readonly T[]): T | undefined =>
    values.length === 0 ? undefined : values[Math.floor(random() * values.length)];
  const options: {
    fromRevision?: bigint;
    toRevision?: bigint;
    toPosition?: GlobalPosition;
    toTime?: Date;
    maxCount?: number;
  } = {};
  const revisions = [0n, 1n, 3n, BigInt(known.length), BigInt(known.length + 2)];
  if (random() < 0.3) options.fromRevision = pick(revisions);
  if (random() < 0.3) options.toRevision = pick(revisions);
  if (random() < 0.4) {
    const event = pick(known);
    options.toPosition = event
      ? random() < 0.5
        ? event.position
        : { commit: event.position.commit, prepare: event.position.prepare - 1n }
      : { commit: 2n ** 63n, prepare: 0n };
  }
  if (random() < 0.3) {
    const event = pick(known);
    options.toTime = event ? new Date(Date.parse(event.metadata.recordedAt) + (random() < 0.5 ? 0 : -1)) : new Date();
  }
  if (random() < 0.4) options.maxCount = Math.floor(random() * 4);
  return options;
}

it('answers every read as the store does, while the streams grow', async () => {
  const random = seededRandom(20261127);
  const cache = new StreamCache(db.store, { maxBytes: 8 * 1024 * 1024 });
  let n = 0;
  for (let step = 0; step < 400; step++) {
    if (random() < 0.25) {
      const stream = STREAMS[Math.floor(random() * 3)]!;
      await db.store.appendToStream(stream, Array.from({ length: 1 + Math.floor(random() * 3) }, () => newEvent(++n)));
    }
    const stream = STREAMS[Math.floor(random() * STREAMS.length)]!;
    const whole = await db.store.readStream(stream);
    const options = randomOptions(whole, random);
    const [fromCache, fromStore] = [await cache.readStream(stream, options), await db.store.readStream(stream, options)];
    expect({ step, stream, options, events: ids(fromCache) }).toEqual({ step, stream, options, events: ids(fromStore) });
    expect(fromCache).toEqual(fromStore);
  }
});

it('sends no query for a read up to a position it has read the stream past, and reads only the tail after an append', async () => {
  const appended = await db.store.appendToStream('brain-10', [newEvent(1), newEvent(2), newEvent(3)]);
  // The store's head stays behind a write still open anywhere on the cluster (another test file's):
  // the cache could then vouch for less of the stream than this test expects it to.
  await db.readable(appended.position);
  const { store, reads } = counted(db.store);
  const cache = new StreamCache(store, { maxBytes: 8 * 1024 * 1024 });
  const first = await cache.readStream('brain-10', { toPosition: (await db.store.readStream('brain-10'))[1]!.position });
  expect(first).toHaveLength(2);
  const afterFirst = reads();
  expect(afterFirst).toBe(2); // the head, then the stream

  const whole = await db.store.readStream('brain-10');
  expect(await cache.readStream('brain-10', { toPosition: whole[0]!.position })).toEqual(whole.slice(0, 1));
  expect(await cache.readStream('brain-10', { maxCount: 2 })).toEqual(whole.slice(0, 2));
  expect(await cache.readStream('brain-10', { toRevision: 2n })).toEqual(whole);
  expect(reads()).toBe(afterFirst);

  // A revision past those kept, or a read with no bound, asks the store what follows what it keeps.
  await db.store.appendToStream('brain-10', [newEvent(4)], { expectedRevision: 2n });
  expect(await cache.readStream('brain-10', { toRevision: 3n })).toHaveLength(4);
  expect(await cache.readStream('brain-10', { maxCount: 4 })).toHaveLength(4);
  expect(reads()).toBe(afterFirst + 1);
  await db.store.appendToStream('brain-10', [newEvent(5)], { expectedRevision: 3n });
  const grown = await cache.readStream('brain-10');
  expect(ids(grown)).toEqual(ids(await db.store.readStream('brain-10')));
  expect(grown).toHaveLength(5);
  expect(reads()).toBe(afterFirst + 2);
});

it('keeps nothing with no memory, and never more than it is given', async () => {
  await db.store.appendToStream('brain-20', [newEvent(1)]);
  const off = counted(db.store);
  const uncached = new StreamCache(off.store, { maxBytes: 0 });
  await uncached.readStream('brain-20', { maxCount: 1 });
  await uncached.readStream('brain-20', { maxCount: 1 });
  expect(off.reads()).toBe(2);

  // A budget of about four events' worth: a stream of many events is read from the store each time.
  await db.store.appendToStream('brain-21', Array.from({ length: 50 }, (_, i) => newEvent(i)));
  const small = counted(db.store);
  const tiny = new StreamCache(small.store, { maxBytes: 4 * 1024 });
  for (let i = 0; i < 3; i++) expect(await tiny.readStream('brain-21', { maxCount: 1 })).toHaveLength(1);
  expect(small.reads()).toBe(3);
});
