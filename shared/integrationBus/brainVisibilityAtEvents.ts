import type { EventStore, RecordedEvent } from '#shared/eventStore/eventStore';
import type { BrainEvent } from '#shared/domain/brains/events';
import { createdVisibility } from '#shared/domain/brains/events';
import type { Visibility } from '#shared/domain/brains/visibility';

/** A brain's visibility as stored right after one of its events (decisions.md "Visibility and collaborators"). */
export interface VisibilityAtEvent {
  readonly visibility: Visibility;
  /** ISO time; set while (and kept after) the brain is embargoed, else null. */
  readonly embargoUntil: string | null;
}

const BRAIN_STREAM = /^brain-\d+$/;

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

/**
 * For every event of a brain stream among `events` (a relay batch), the brain's visibility right
 * after it, by event id: folded from the brain's own stream, never read from a read model that may
 * be behind or ahead of the event. A stream whose first event in the batch is its first event at
 * all (a brain created in this batch, the common case) needs no read; otherwise only the events
 * before the batch's first are read, once per stream and batch.
 */
export async function brainVisibilityAtEvents(
  store: Pick<EventStore, 'readStream'>,
  events: readonly RecordedEvent[],
): Promise<Map<string, VisibilityAtEvent>> {
  const byStream = new Map<string, RecordedEvent[]>();
  for (const event of events)
    if (BRAIN_STREAM.test(event.streamName)) {
      const list = byStream.get(event.streamName);
      if (list) list.push(event);
      else byStream.set(event.streamName, [event]);
    }
  const result = new Map<string, VisibilityAtEvent>();
  await Promise.all(
    [...byStream].map(async ([stream, inBatch]) => {
      const first = inBatch[0]!.streamRevision;
      const earlier = first > 0n ? await store.readStream(stream, { toRevision: first - 1n }) : [];
      let state = earlier.reduce<VisibilityAtEvent | undefined>(evolve, undefined);
      for (const event of inBatch) {
        state = evolve(state, event);
        if (state) result.set(event.id, state);
      }
    }),
  );
  return result;
}
