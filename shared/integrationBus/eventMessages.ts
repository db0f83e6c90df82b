import type { AccessTokenIssued, UserPasswordChanged, UserRegistered } from '#shared/domain/accounts/events';
import type { RecordedEvent } from '#shared/eventStore/eventStore';
import type { BusMessage } from './integrationBus';
import type { VisibilityAtEvent } from './brainVisibilityAtEvents';

/**
 * The streams other consumers are told about, by their category (the stream name up to the first
 * '-'), and the topic each goes to. Internal streams (uniqueness reservations, id allocation, token
 * usage, idempotency records) stay inside the service.
 */
export const PUBLISHED_STREAMS: Readonly<Record<string, string>> = {
  user: 'users',
  category: 'categories',
  species: 'species',
  atlas: 'atlases',
  brain: 'brains',
  upload: 'uploads',
};

/**
 * Fields never published, wherever they occur in an event's data: the identity events' secrets,
 * kept only as hashes (named against the event types, so a rename cannot slip through).
 */
const SECRET_FIELDS: ReadonlySet<string> = new Set([
  'passwordHash' satisfies keyof UserRegistered['data'] & keyof UserPasswordChanged['data'],
  'tokenHash' satisfies keyof AccessTokenIssued['data'],
]);

export const topicsOf = (prefix: string): string[] =>
  [...new Set(Object.values(PUBLISHED_STREAMS))].map((name) => `${prefix}.${name}`);

/**
 * The message of each published event, in order: keyed by its stream, its data without secrets,
 * with what a consumer needs to deduplicate (the event id: the relay delivers at least once) and to
 * order (stream revision, global position). A brain's events carry the brain's visibility right
 * after the event (`visibility` and `embargo_until` in the value, `visibility` and `embargo_until`
 * headers), so that a consumer can honour it without a read of its own: a brain `embargoed` is
 * public from `embargo_until` on, whether or not its EmbargoLifted has come yet.
 */
export function eventMessages(
  events: readonly RecordedEvent[],
  prefix: string,
  brainVisibility: ReadonlyMap<string, VisibilityAtEvent> = new Map(),
): BusMessage[] {
  const messages: BusMessage[] = [];
  for (const event of events) {
    const topic = PUBLISHED_STREAMS[categoryOf(event.streamName)];
    if (topic === undefined) continue;
    const visible = brainVisibility.get(event.id);
    const value = {
      id: event.id,
      type: event.type,
      stream: event.streamName,
      revision: event.streamRevision.toString(),
      position: { commit: event.position.commit.toString(), prepare: event.position.prepare.toString() },
      data: withoutSecrets(event.data),
      metadata: event.metadata,
      ...(visible && { visibility: visible.visibility, embargo_until: visible.embargoUntil }),
    };
    messages.push({
      topic: `${prefix}.${topic}`,
      key: event.streamName,
      value: JSON.stringify(value),
      headers: {
        event_id: event.id,
        event_type: event.type,
        schema_version: String(event.metadata.schemaVersion),
        'content-type': 'application/json',
        ...(visible && { visibility: visible.visibility }),
        ...(visible?.embargoUntil && { embargo_until: visible.embargoUntil }),
      },
    });
  }
  return messages;
}

function categoryOf(streamName: string): string {
  const dash = streamName.indexOf('-');
  return dash < 0 ? streamName : streamName.slice(0, dash);
}

function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (value === null || typeof value !== 'object') return value;
  const kept: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value))
    if (!SECRET_FIELDS.has(key)) kept[key] = withoutSecrets(field);
  return kept;
}
