import { randomUUID } from 'node:crypto';
import type { BusMessage, IntegrationBus } from '#shared/integrationBus/integrationBus';
import { createLogger } from '#shared/logging/logger';
import { createMetrics } from '#shared/metrics/metrics';
import { type RunningRelay, startRelay } from '#services/relay/startRelay';
import { eventStoreDatabase } from '#tests/support/eventStoreDatabase';
import { waitFor } from '#tests/support/waitFor';

/**
 * The relay against the real PostgreSQL event store and checkpoint, with a bus that records what it
 * was given (Kafka itself cannot run here: its adapter has its own contract suite,
 * tests/contract/integrationBus.kafka.int.test.ts). `failNext` makes the next publishes fail after
 * delivering part of the batch, as a broker can.
 */
class RecordingBus implements IntegrationBus {
  readonly delivered: BusMessage[] = [];
  readonly prepared: string[] = [];
  failNext = 0;
  prepare(topics: readonly string[]): Promise<void> {
    this.prepared.push(...topics);
    return Promise.resolve();
  }
  publish(messages: readonly BusMessage[]): Promise<void> {
    if (this.failNext > 0) {
      this.failNext -= 1;
      this.delivered.push(...messages.slice(0, Math.ceil(messages.length / 2)));
      return Promise.reject(new Error('broker not available'));
    }
    this.delivered.push(...messages);
    return Promise.resolve();
  }
  async ping(): Promise<void> {}
  async close(): Promise<void> {}
}

const db = eventStoreDatabase('relay');
const relays: RunningRelay[] = [];
afterEach(async () => {
  await Promise.all(relays.splice(0).map((relay) => relay.stop()));
});

let prefix = 0;
function relay(bus: IntegrationBus, topicPrefix: string): RunningRelay {
  const running = startRelay({
    store: db.store,
    pool: db.pool,
    bus,
    topicPrefix,
    logger: createLogger({ service: 'relay-test', level: 'silent' }),
    metrics: createMetrics('relay_test'),
    batchSize: 7,
    backoff: { initialMs: 10, maxMs: 50 },
    standbyPollMs: 20,
  });
  relays.push(running);
  return running;
}

const METADATA = {
  actor: 'system',
  requestId: null,
  correlationId: 'c',
  causationId: null,
  schemaVersion: 1,
};

/** Appends `count` events to each stream, interleaved; returns the published streams' event ids in order. */
async function append(streams: readonly string[], count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++)
    for (const stream of streams) {
      const id = randomUUID();
      await db.store.appendToStream(stream, [{ id, type: 'Something', data: { i }, metadata: METADATA }]);
      if (!stream.startsWith('reservation-')) ids.push(id);
    }
  return ids;
}

const idsOf = (messages: readonly BusMessage[]) => messages.map((m) => m.headers.event_id);

/** Each test gets streams and a topic prefix of its own; the checkpoint is shared, so the relay's
 * first run in each test may first publish earlier tests' events: only this test's are compared. */
function scope() {
  const tag = `t${prefix++}${randomUUID().slice(0, 6)}`;
  const mine = (messages: readonly BusMessage[]) => messages.filter((m) => m.key.includes(tag));
  return {
    tag,
    mine,
    streams: [`brain-${tag}1`, `upload-${tag}2`, `reservation-email-${tag}`, `user-${tag}3`],
  };
}

test('every published event reaches the bus once, in the global order; internal streams stay in', async () => {
  const { streams, mine } = scope();
  const bus = new RecordingBus();
  relay(bus, 'catalogue');
  const expected = await append(streams, 10);
  await waitFor('the events', () => mine(bus.delivered).length, { until: (n) => n >= expected.length });
  expect(idsOf(mine(bus.delivered))).toEqual(expected);
  expect(new Set(bus.prepared)).toEqual(
    new Set(['users', 'categories', 'species', 'atlases', 'brains', 'uploads'].map((t) => `catalogue.${t}`)),
  );
});

test('a restarted relay resumes after what the bus acknowledged: nothing again, nothing missed', async () => {
  const { streams, mine } = scope();
  const first = new RecordingBus();
  const running = relay(first, 'catalogue');
  const before = await append(streams, 5);
  await waitFor('the first events', () => mine(first.delivered).length, { until: (n) => n >= before.length });
  await running.stop();
  const after = await append(streams, 5);
  const second = new RecordingBus();
  relay(second, 'catalogue');
  await waitFor('the later events', () => mine(second.delivered).length, { until: (n) => n >= after.length });
  expect(idsOf(mine(first.delivered))).toEqual(before);
  expect(idsOf(mine(second.delivered))).toEqual(after);
});

test('a failed publish is sent again whole: at least once, in order, no gap', async () => {
  const { streams, mine } = scope();
  const bus = new RecordingBus();
  relay(bus, 'catalogue');
  await waitFor('the lead', () => relays[0]!.leading());
  bus.failNext = 3;
  const expected = await append(streams, 8);
  await waitFor('the events after the faults', () => new Set(idsOf(mine(bus.delivered))).size, {
    until: (n) => n >= expected.length,
  });
  const delivered = idsOf(mine(bus.delivered));
  // Deduplicated by event id (as a consumer does), the order is the append order.
  expect([...new Set(delivered)]).toEqual(expected);
  expect(delivered.length).toBeGreaterThan(expected.length);
  expect(bus.failNext).toBe(0);
});

test('of two relays one publishes; when it stops the other takes over from its checkpoint', async () => {
  const { streams, mine } = scope();
  const [busA, busB] = [new RecordingBus(), new RecordingBus()];
  const a = relay(busA, 'catalogue');
  await waitFor('the first relay to lead', () => a.leading());
  const b = relay(busB, 'catalogue');
  const early = await append(streams, 4);
  await waitFor('the leader to publish', () => mine(busA.delivered).length, {
    until: (n) => n >= early.length,
  });
  expect(b.leading()).toBe(false);
  expect(mine(busB.delivered)).toEqual([]);
  await a.stop();
  const late = await append(streams, 4);
  await waitFor('the other relay to take over', () => mine(busB.delivered).length, {
    until: (n) => n >= late.length,
  });
  expect(idsOf(mine(busA.delivered))).toEqual(early);
  expect(idsOf(mine(busB.delivered))).toEqual(late);
});

test("a brain's messages carry its visibility as of each event, also when its stream began in an earlier batch", async () => {
  const brainId = 900_000 + Math.floor(Math.random() * 99_999);
  const stream = `brain-${brainId}`;
  const until = '2031-01-01T00:00:00.000Z';
  const at = '2026-11-26T00:00:00.000Z';
  const events: Array<[string, Record<string, unknown>]> = [
    ['BrainCreated', { brainId, name: 'scan', uploaderId: 1, visibility: 'private', embargoUntil: null }],
    ['BrainCollaboratorAdded', { brainId, userId: 2, role: 'viewer', addedBy: 1, addedAt: at }],
    [
      'BrainUpdated',
      { brainId, changes: { visibility: 'embargoed', embargoUntil: until }, updatedBy: 1, updatedAt: at },
    ],
    ['BrainUpdated', { brainId, changes: { name: 'renamed' }, updatedBy: 1, updatedAt: at }],
    ['EmbargoLifted', { brainId, embargoUntil: until, liftedAt: until }],
    ['BrainDeleted', { brainId, fileUploadIds: [], deletedBy: 1, deletedAt: until }],
  ];
  const write = async (from: number, to: number) => {
    for (const [type, data] of events.slice(from, to))
      await db.store.appendToStream(stream, [{ id: randomUUID(), type, data, metadata: METADATA }]);
  };
  const bus = new RecordingBus();
  const mine = () => bus.delivered.filter((m) => m.key === stream);
  await write(0, 2);
  const running = relay(bus, 'catalogue');
  await waitFor('the first two', () => mine().length === 2);
  // Later batches start mid-stream: what came before is read from the stream.
  await running.stop();
  await write(2, 3);
  relay(bus, 'catalogue');
  await waitFor('the third', () => mine().length === 3);
  await write(3, 6);
  await waitFor('all six', () => mine().length === 6);
  const seen = mine().map((m) => {
    const value = JSON.parse(m.value) as { type: string; visibility: string; embargo_until: string | null };
    return [value.type, value.visibility, value.embargo_until, m.headers.visibility, m.headers.embargo_until];
  });
  expect(seen).toEqual([
    ['BrainCreated', 'private', null, 'private', undefined],
    ['BrainCollaboratorAdded', 'private', null, 'private', undefined],
    ['BrainUpdated', 'embargoed', until, 'embargoed', until],
    ['BrainUpdated', 'embargoed', until, 'embargoed', until],
    ['EmbargoLifted', 'public', until, 'public', until],
    ['BrainDeleted', 'public', until, 'public', until],
  ]);
  // Other streams' messages carry none.
  expect(bus.delivered.filter((m) => m.key !== stream).every((m) => m.headers.visibility === undefined)).toBe(
    true,
  );
});

test("a brain's file uploads carry the brain's visibility as of each event; an upload of no brain reads private", async () => {
  const brainId = 900_000 + Math.floor(Math.random() * 99_999);
  const [file, standalone] = [randomUUID(), randomUUID()];
  const until = '2031-01-01T00:00:00.000Z';
  const append1 = (stream: string, type: string, data: Record<string, unknown>) =>
    db.store.appendToStream(stream, [{ id: randomUUID(), type, data, metadata: METADATA }]);
  // As a create does: the file's upload first, then the brain.
  await append1(`upload-${file}`, 'UploadReceived', { uploadId: file, associatedBrainId: brainId });
  await append1(`brain-${brainId}`, 'BrainCreated', { brainId, visibility: 'private', embargoUntil: null });
  await append1(`upload-${file}`, 'UploadProcessingStarted', { uploadId: file });
  await append1(`brain-${brainId}`, 'BrainUpdated', {
    brainId,
    changes: { visibility: 'embargoed', embargoUntil: until },
  });
  await append1(`upload-${file}`, 'UploadProcessingCompleted', { uploadId: file });
  await append1(`upload-${standalone}`, 'UploadReceived', { uploadId: standalone, associatedBrainId: null });
  const bus = new RecordingBus();
  const running = relay(bus, 'catalogue');
  const mine = () =>
    bus.delivered.filter((m) => m.key === `upload-${file}` || m.key === `upload-${standalone}`);
  await waitFor('the four upload messages', () => mine().length === 4);
  // A later batch that starts mid-stream reads the upload's first event for its brain.
  await running.stop();
  await append1(`upload-${file}`, 'UploadDeleted', { uploadId: file });
  relay(bus, 'catalogue');
  await waitFor('the fifth', () => mine().length === 5);
  expect(mine().map((m) => [m.headers.event_type, m.key === `upload-${file}`, m.headers.visibility])).toEqual(
    [
      ['UploadReceived', true, 'private'],
      ['UploadProcessingStarted', true, 'private'],
      ['UploadProcessingCompleted', true, 'embargoed'],
      ['UploadReceived', false, 'private'],
      ['UploadDeleted', true, 'embargoed'],
    ],
  );
  expect(JSON.parse(mine()[2]!.value)).toMatchObject({ visibility: 'embargoed', embargo_until: until });
});
