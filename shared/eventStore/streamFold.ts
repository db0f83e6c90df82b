import type { RecordedEvent } from './eventStore';

/**
 * A fold of one stream's events from its first revision, remembered per event object: the state
 * right after each event. The replays' stream cache (shared/audit/replay/streamCache) hands every
 * request the same frozen event objects, so a request replaying a brain with 200 revisions folds
 * only what no earlier request folded; events read afresh are simply folded (and forgotten with
 * them: the memory is a WeakMap). Only a run of the stream from revision 0 with no gap uses what is
 * remembered, as anything else (a filtered subset) would not be the same fold.
 */
export function streamFold<S>(
  initial: () => S,
  step: (state: S, event: RecordedEvent) => S,
): (events: readonly RecordedEvent[]) => S {
  const after = new WeakMap<RecordedEvent, S>();
  return (events) => {
    if (!isWholePrefix(events)) return events.reduce(step, initial());
    let start = events.length;
    let state: S | undefined;
    while (start > 0 && state === undefined) state = after.get(events[--start]!);
    if (state === undefined) state = initial();
    else start++;
    for (let i = start; i < events.length; i++) {
      state = step(state, events[i]!);
      after.set(events[i]!, state);
    }
    return state;
  };
}

/** Revisions 0, 1, 2… of one stream, in order. */
function isWholePrefix(events: readonly RecordedEvent[]): boolean {
  const stream = events[0]?.streamName;
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    if (event.streamName !== stream || event.streamRevision !== BigInt(i)) return false;
  }
  return true;
}
