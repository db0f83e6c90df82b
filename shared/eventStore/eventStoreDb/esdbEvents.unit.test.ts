import {
  ANY,
  NO_STREAM,
  STREAM_EXISTS,
  type RecordedEvent as EsdbRecordedEvent,
} from '@eventstore/db-client';
import type { NewEvent } from '#shared/eventStore/eventStore';
import { fromEsdbEvent, isSystemEvent, toEsdbExpectedRevision, toEventData } from './esdbEvents';

const event: NewEvent = {
  id: '6f1c1f3e-9a1e-4c36-8c1a-2b1f6a0d4e11',
  type: 'BrainCreated',
  data: { name: 'Macaque 7' },
  metadata: { actor: '42', requestId: 'req-1', correlationId: 'c-1', causationId: null, schemaVersion: 2 },
};

test('expected revisions map onto the client constants', () => {
  expect([toEsdbExpectedRevision('any'), toEsdbExpectedRevision('no_stream')]).toEqual([ANY, NO_STREAM]);
  expect([toEsdbExpectedRevision('stream_exists'), toEsdbExpectedRevision(3n)]).toEqual([STREAM_EXISTS, 3n]);
});

test('an appended event keeps its id (native idempotent retries) and is JSON', () => {
  expect(toEventData(event)).toMatchObject({
    id: event.id,
    type: 'BrainCreated',
    contentType: 'application/json',
    data: event.data,
    metadata: event.metadata,
  });
  expect(() => toEventData({ ...event, data: 42 })).toThrow(TypeError);
});

test('a recorded event carries recordedAt from `created` and its $all position', () => {
  const recorded: EsdbRecordedEvent = {
    streamId: 'brain-7',
    id: event.id,
    isJson: true,
    revision: 4n,
    type: 'BrainCreated',
    created: new Date('2024-05-06T07:08:09.123Z'),
    data: { name: 'Macaque 7' },
    metadata: new TextEncoder().encode(JSON.stringify(event.metadata)),
    position: { commit: 100n, prepare: 90n },
  };
  expect(fromEsdbEvent(recorded)).toEqual({
    id: event.id,
    type: 'BrainCreated',
    data: { name: 'Macaque 7' },
    metadata: { ...event.metadata, recordedAt: '2024-05-06T07:08:09.123Z' },
    streamName: 'brain-7',
    streamRevision: 4n,
    position: { commit: 100n, prepare: 90n },
  });
  expect(() => fromEsdbEvent({ ...recorded, position: undefined })).toThrow(/position/);
});

test('system events are recognised by their type', () => {
  expect([isSystemEvent({ type: '$statsCollected' }), isSystemEvent({ type: 'BrainCreated' })]).toEqual([
    true,
    false,
  ]);
});
