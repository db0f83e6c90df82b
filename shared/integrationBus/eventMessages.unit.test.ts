import type { RecordedEvent } from '#shared/eventStore/eventStore';
import { eventMessages, topicsOf } from './eventMessages';

let n = 0;
function recorded(streamName: string, type: string, data: unknown): RecordedEvent {
  n += 1;
  return {
    id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    type,
    data,
    metadata: {
      actor: '7',
      requestId: 'req-1',
      correlationId: 'corr-1',
      causationId: null,
      schemaVersion: 2,
      recordedAt: '2026-11-26T04:00:00.000Z',
    },
    streamName,
    streamRevision: 3n,
    position: { commit: BigInt(100 + n), prepare: BigInt(100 + n) },
  };
}

test('an event becomes a message on its category topic, keyed by its stream, with its id and type as headers', () => {
  const event = recorded('brain-42', 'BrainCreated', { brainId: 42, name: 'Hippocampus' });
  const [message] = eventMessages([event], 'catalogue');
  expect(message).toMatchObject({
    topic: 'catalogue.brains',
    key: 'brain-42',
    headers: {
      event_id: event.id,
      event_type: 'BrainCreated',
      schema_version: '2',
      'content-type': 'application/json',
    },
  });
  expect(JSON.parse(message!.value) as unknown).toEqual({
    id: event.id,
    type: 'BrainCreated',
    stream: 'brain-42',
    revision: '3',
    position: { commit: event.position.commit.toString(), prepare: event.position.prepare.toString() },
    data: { brainId: 42, name: 'Hippocampus' },
    metadata: event.metadata,
  });
});

test('each published category has its topic; internal streams are not published', () => {
  const events = [
    recorded('user-1', 'UserRegistered', {}),
    recorded('category-1', 'CategoryCreated', {}),
    recorded('species-1', 'SpeciesCreated', {}),
    recorded('atlas-1', 'AtlasCreated', {}),
    recorded('brain-1', 'BrainCreated', {}),
    recorded('upload-9f1c', 'UploadReceived', {}),
    recorded('reservation-email-a@b.org', 'Reserved', {}),
    recorded('sequence-brain', 'IdAllocated', {}),
    recorded('accessTokenUsage-t1', 'TokenUsed', {}),
  ];
  expect(eventMessages(events, 'lab').map((m) => m.topic)).toEqual([
    'lab.users',
    'lab.categories',
    'lab.species',
    'lab.atlases',
    'lab.brains',
    'lab.uploads',
  ]);
  expect(topicsOf('lab').sort()).toEqual(
    ['lab.atlases', 'lab.brains', 'lab.categories', 'lab.species', 'lab.uploads', 'lab.users'].sort(),
  );
});

test('password and token hashes never leave the service, however deep they sit', () => {
  const events = [
    recorded('user-1', 'UserRegistered', { userId: 1, email: 'a@b.org', passwordHash: 'c2NyeXB0...' }),
    recorded('user-1', 'PasswordChanged', { userId: 1, passwordHash: 'c2NyeXB0...', changedAt: 'now' }),
    recorded('user-1', 'TokenCreated', { userId: 1, tokenId: 't1', tokenHash: 'ab12', name: 'cli' }),
    recorded('user-1', 'Imported', {
      users: [{ passwordHash: 'x', profile: { tokenHash: 'y', name: 'z' } }],
    }),
  ];
  const values = eventMessages(events, 'catalogue').map((m) => m.value);
  for (const value of values) expect(value).not.toMatch(/Hash/);
  const data = (value: string | undefined) => (JSON.parse(value!) as { data: unknown }).data;
  expect(data(values[0])).toEqual({ userId: 1, email: 'a@b.org' });
  expect(data(values[2])).toEqual({ userId: 1, tokenId: 't1', name: 'cli' });
  expect(data(values[3])).toEqual({ users: [{ profile: { name: 'z' } }] });
});

test("a brain event's message carries the visibility it is given for it, in the value and as headers", () => {
  const event = recorded('brain-42', 'BrainUpdated', { brainId: 42, changes: { name: 'x' } });
  const other = recorded('brain-43', 'BrainUpdated', { brainId: 43, changes: { name: 'y' } });
  const visibility = new Map([
    [event.id, { visibility: 'embargoed' as const, embargoUntil: '2030-01-01T00:00:00.000Z' }],
  ]);
  const [message, plain] = eventMessages([event, other], 'catalogue', visibility);
  expect(JSON.parse(message!.value)).toMatchObject({
    visibility: 'embargoed',
    embargo_until: '2030-01-01T00:00:00.000Z',
  });
  expect(message!.headers).toMatchObject({
    visibility: 'embargoed',
    embargo_until: '2030-01-01T00:00:00.000Z',
  });
  expect(JSON.parse(plain!.value)).not.toHaveProperty('visibility');
  expect(plain!.headers).not.toHaveProperty('visibility');
});
