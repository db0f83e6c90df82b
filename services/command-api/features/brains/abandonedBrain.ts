import type { CommandContext } from '#shared/commandHandling/commandContext';
import { toNewEvents } from '#shared/commandHandling/handleCommand';
import { brainStreamName } from '#shared/domain/brains/events';
import { STREAM_FENCED, type StreamFenced } from '#shared/domain/reservation/fencing';
import { type LiveUpload, uploadStreamName } from '#shared/domain/uploads/events';
import { type EventStore, WrongExpectedRevisionError } from '#shared/eventStore/eventStore';

/** As for reserved values (reserveValue): a create still working after this long has stalled. */
export const ABANDONED_AFTER_MS = 60_000;

/**
 * Fences a brain's stream that has no event yet: from then on it can never be created (its create
 * fails on the fence), so an upload attached to it is free again. True when the stream is fenced
 * (by this call or before), false when the brain exists.
 */
export async function fenceBrain(
  store: EventStore,
  brainId: number,
  uploadId: string,
  cmd: CommandContext,
  now: string,
): Promise<boolean> {
  const stream = brainStreamName(brainId);
  const event: StreamFenced = {
    type: STREAM_FENCED,
    data: {
      reason: 'reservation_taken_over',
      scope: 'file_upload',
      takenOverBy: uploadStreamName(uploadId),
      fencedAt: now,
    },
  };
  try {
    await store.appendToStream(stream, toNewEvents([event], cmd), { expectedRevision: 'no_stream' });
    return true;
  } catch (error) {
    if (!(error instanceof WrongExpectedRevisionError)) throw error;
    const [first] = await store.readStream(stream, { maxCount: 1 });
    return first?.type === STREAM_FENCED;
  }
}

/**
 * The brain an upload names that will never exist, if so: its stream is fenced, or it is still
 * empty a minute after the upload was attached to it (received for it) and this call fences it.
 * Only on a store without a unit of work can an attach outlive its brain's create (the create
 * failed after the attach, and so did fencing it at once); PostgreSQL commits both or neither.
 */
export async function abandonedBrainOf(
  store: EventStore,
  upload: LiveUpload,
  cmd: CommandContext,
  now: string,
): Promise<number | undefined> {
  const brainId = upload.associatedBrainId;
  if (brainId === null) return undefined;
  const [first] = await store.readStream(brainStreamName(brainId), { maxCount: 1 });
  if (first) return first.type === STREAM_FENCED ? brainId : undefined;
  const since = Date.parse(upload.attachedAt ?? upload.receivedAt);
  if (Date.parse(now) - since < ABANDONED_AFTER_MS) return undefined;
  return (await fenceBrain(store, brainId, upload.uploadId, cmd, now)) ? brainId : undefined;
}
