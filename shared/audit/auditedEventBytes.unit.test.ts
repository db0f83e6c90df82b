import { AuditedEventBytes, auditText } from './auditedEventBytes';
import {
  RESOURCE_IN_PAYLOAD,
  actorIdOf,
  redactedData,
  referencesOfEvent,
  resourceOfEvent,
} from './auditedEvent';
import { ByteSink, CanonicalJsonWriter } from './canonicalJsonBytes';
import { canonicalJson } from './ledgerCanonicalJson';

/**
 * AuditedEventBytes answers from canonical bytes what the object functions answer from the parsed
 * event, or declines: wherever it answers, the answer must be theirs, and a payload it passes on
 * must be one redactedData gives back whole.
 */
const writer = new CanonicalJsonWriter();
const sink = new ByteSink(16);
const audited = new AuditedEventBytes();

/** The canonical bytes of a JSON text, after a prefix (as in the chained bytes). */
function canonical(text: string): { start: number; end: number } {
  const source = Buffer.from(text, 'utf8');
  sink.length = 0;
  sink.bytes(Buffer.from('prefix'), 0, 6);
  const start = sink.length;
  writer.write(sink, source, 0, source.length);
  return { start, end: sink.length };
}

const PAYLOADS = [
  '{}',
  '{"brainId": 1, "speciesId": 3, "atlasId": 7, "categoryId": 2, "name": "x"}',
  '{"brainId": 1, "changes": {"atlasId": 2, "speciesId": "", "categoryId": null}, "atlasId": 2}',
  '{"associatedBrainId": 12, "uploadId": "u"}',
  '{"atlasId": "tab\\there", "speciesId": "a\\"b"}',
  '{"atlasId": "\\u0041b", "speciesId": 3.0, "categoryId": 1e21, "associatedBrainId": -0}',
  '{"changes": [1, 2], "speciesId": [3], "atlasId": {"x": 1}, "categoryId": true}',
  '{"changes": {"changes": {"atlasId": 9}, "token": 1}}',
  '{"passwordHash": "h", "name": "n"}',
  '{"tokenHash": "h"}',
  '{"secret": 1}',
  '{"token": "t", "speciesId": 1}',
  '{"__proto__": {"atlasId": 3}, "speciesId": 1}',
  '{"brainId": 12, "associatedBrainId": 12}',
  '[1, 2]',
  '"text"',
  'null',
  '{"é": {"😀": [1, {"speciesId": 4}]}, "speciesId": 5, "userId": 3}',
  '{"scope": "email", "value": "ann@example.org", "ownerId": "user-1"}',
  '{"scope": "username", "value": "ann", "ownerId": "brain-12"}',
  '{"sequence": "brain", "id": 12, "atlasId": 12}',
  '{"tokenId": "t-1", "speciesId": 2}',
];
const TYPES = [
  'BrainUpdated',
  'BrainCollaboratorAdded',
  'IdAllocated',
  'ValueReserved',
  'ReservationReleased',
  'AccessTokenRevoked',
  'UploadReceived',
];

test('references, where answered, are referencesOfEvent; the payload passed on is what redactedData keeps', () => {
  let answered = 0;
  for (const text of PAYLOADS)
    for (const type of TYPES) {
      const data: unknown = JSON.parse(text);
      const event = { type, data, streamName: 'brain-12' };
      const { start, end } = canonical(text);
      const refs = audited.references(type, sink.buffer, start, end, resourceOfEvent(event));
      if (refs === undefined) continue;
      answered++;
      expect({ text, type, refs }).toEqual({ text, type, refs: referencesOfEvent(event) });
      // As JSON text (what jsonb is made of): -0 and 0 are both written 0.
      expect(sink.buffer.toString('utf8', start, end)).toBe(canonicalJson(redactedData(type, data)));
    }
  expect(answered).toBeGreaterThan(10); // the common payloads are answered from bytes
});

test('the types whose resource is in the payload are those resourceOfEvent reads it from', () => {
  const data = { tokenId: 't', ownerId: 'brain-3', sequence: 'brain', id: 4 };
  for (const type of [...RESOURCE_IN_PAYLOAD, 'BrainCreated', 'UserRegistered', 'StreamFenced'])
    expect({ type, fromPayload: resourceOfEvent({ type, data, streamName: 'user-9' })?.id !== '9' }).toEqual({
      type,
      fromPayload: RESOURCE_IN_PAYLOAD.has(type),
    });
});

const METADATA = [
  '{"actor": "7", "requestId": "r-1", "correlationId": "c"}',
  '{"actor": "system", "requestId": null}',
  '{"actor": "0012", "requestId": "tab\\tquote\\""}',
  '{"actor": "12345678901", "requestId": true}',
  '{"actor": 7, "requestId": 12.50}',
  '{"actor": [5], "requestId": ["a", "b"]}',
  '{"actor": {"id": 1}, "requestId": {"a": 1}}',
  '{"actor": "\\u0037", "requestId": "\\u00e9"}',
  '{"actor": "", "requestId": ""}',
  '{"requestId": false}',
  '{}',
];

test('actor and request id from the canonical metadata are actorIdOf and the text copyField writes', () => {
  for (const text of METADATA) {
    const metadata = JSON.parse(text) as Record<string, unknown>;
    const { start, end } = canonical(text);
    expect(audited.readMetadata(sink.buffer, start, end)).toBe(true);
    const requestId =
      audited.requestIdStart >= 0
        ? sink.buffer.toString('utf8', audited.requestIdStart, audited.requestIdEnd)
        : audited.requestIdText;
    expect({ text, actorId: audited.actorId, requestId }).toEqual({
      text,
      actorId: actorIdOf(String(metadata.actor)),
      requestId: auditText(metadata.requestId),
    });
  }
  const { start, end } = canonical('"not an object"');
  expect(audited.readMetadata(sink.buffer, start, end)).toBe(false);
});
