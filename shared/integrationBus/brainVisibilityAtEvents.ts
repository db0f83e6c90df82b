import { type EventStore, type RecordedEvent, comparePositions } from '#shared/eventStore/eventStore';
import type { BrainEvent } from '#shared/domain/brains/events';
import { brainStreamName, createdVisibility } from '#shared/domain/brains/events';
import type { UploadReceived } from '#shared/domain/uploads/events';
import type { Visibility } from '#shared/domain/brains/visibility';

/** A brain's visibility as stored right after one of its events (decisions.md "Visibility and collaborators"). */
export interface VisibilityAtEvent {
  readonly visibility: Visibility;
  /** ISO time; set while (and kept after) the brain is embargoed, else null. */
  readonly embargoUntil: string | null;
}

const BRAIN_STREAM = /^brain-\d+$/;
const UPLOAD_STREAM = /^upload-./;

/** A file upload of no brain is its uploader's alone (decisions.md: private to them and staff). */
const STANDALONE_UPLOAD: VisibilityAtEvent = { visibility: 'private', embargoUntil: null };

/** The visibility after `event`, given the one before it (undefined before the brain is created). */
function evolve(before: VisibilityAtEvent | undefined, event: RecordedEvent): VisibilityAtEvent | undefined {
  const e = event as unknown as BrainEvent;
  switch (e.type) {
    case 'BrainCreated':
      return createdVisibility(e.data);
    case 'BrainUpdated': {
      if (!before) return before;
      const { visibility, embargoUntil } = e.data.changes;
      return {
        visibility: visibility ?? before.visibility,
        embargoUntil: embargoUntil === undefined ? before.embargoUntil : embargoUntil,
      };
    }
    case 'EmbargoLifted':
      return before && { ...before, visibility: 'public' };
    default:
      // BrainDeleted keeps the visibility the brain had; collaborator events do not change it.
      return before;
  }
}

/** Events of the batch by stream, in order, for the streams `pattern` matches. */
function streamsOf(events: readonly RecordedEvent[], pattern: RegExp): Map<string, RecordedEvent[]> {
  const byStream = new Map<string, RecordedEvent[]>();
  for (const event of events)
    if (pattern.test(event.streamName)) {
      const list = byStream.get(event.streamName);
      if (list) list.push(event);
      else byStream.set(event.streamName, [event]);
    }
  return byStream;
}

/**
 * For every event of a brain stream among `events` (a relay batch), the brain's visibility right
 * after it, by event id: folded from the brain's own stream, never read from a read model that may
 * be behind or ahead of the event. A stream whose first event in the batch is its first event at
 * all (a brain created in this batch, the common case) needs no read; otherwise only the events
 * before the batch's first are read, once per stream and batch.
 *
 * The events of a brain's file uploads carry the brain's visibility as of the event (as created,
 * for the file received just before its brain); those of an upload of no brain read private.
 */
export async function brainVisibilityAtEvents(
  store: Pick<EventStore, 'readStream'>,
  events: readonly RecordedEvent[],
): Promise<Map<string, VisibilityAtEvent>> {
  const result = new Map<string, VisibilityAtEvent>();
  await Promise.all([
    ...[...streamsOf(events, BRAIN_STREAM)].map(async ([stream, inBatch]) => {
      const first = inBatch[0]!.streamRevision;
      const earlier = first > 0n ? await store.readStream(stream, { toRevision: first - 1n }) : [];
      let state = earlier.reduce<VisibilityAtEvent | undefined>(evolve, undefined);
      for (const event of inBatch) {
        state = evolve(state, event);
        if (state) result.set(event.id, state);
      }
    }),
    ...[...streamsOf(events, UPLOAD_STREAM)].map(async ([stream, inBatch]) => {
      const received =
        inBatch.find((event) => event.type === 'UploadReceived') ??
        (await store.readStream(stream, { maxCount: 1 }))[0];
      if (received?.type !== 'UploadReceived') return;
      const brainId = (received.data as UploadReceived['data']).associatedBrainId;
      if (brainId === null) {
        for (const event of inBatch) result.set(event.id, STANDALONE_UPLOAD);
        return;
      }
      const brain = await store.readStream(brainStreamName(brainId));
      for (const event of inBatch) {
        const before = brain.filter((e) => comparePositions(e.position, event.position) <= 0);
        const state = (before.length > 0 ? before : brain.slice(0, 1)).reduce<VisibilityAtEvent | undefined>(
          evolve,
          undefined,
        );
        if (state) result.set(event.id, state);
      }
    }),
  ]);
  return result;
}
