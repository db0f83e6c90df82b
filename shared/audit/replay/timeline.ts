/**
 * A replay: the events of one or more streams folded in one global order, with the resource's
 * representation right before and right after each event (decisions.md "Audit": history `changes`
 * and "as of" reads are both computed this way, never from a read model's copy).
 */
import { type RecordedEvent, comparePositions } from '#shared/eventStore/eventStore';
import type { Representation } from '#shared/audit/changes';

/** How a resource is rebuilt: a fold over its events (the domain's evolve) and a view of the result. */
export interface Replay<State> {
  readonly initial: () => State;
  readonly evolve: (state: State, event: RecordedEvent) => State;
  /** The representation of a state; undefined while the resource does not exist (not yet, or deleted). */
  readonly represent: (state: State) => Representation | undefined;
}

export interface TimelineStep {
  readonly event: RecordedEvent;
  readonly before: Representation | undefined;
  readonly after: Representation | undefined;
}

/** Events of several streams (each in its own order) merged into the global order, without duplicates. */
export function mergeByPosition(streams: ReadonlyArray<readonly RecordedEvent[]>): RecordedEvent[] {
  const seen = new Set<string>();
  return streams
    .flat()
    .filter((event) => (seen.has(event.id) ? false : (seen.add(event.id), true)))
    .sort((a, b) => comparePositions(a.position, b.position));
}

/** The representation before and after every event, in the events' order. */
export function replayTimeline<State>(
  events: readonly RecordedEvent[],
  replay: Replay<State>,
): TimelineStep[] {
  let state = replay.initial();
  let before = replay.represent(state);
  return events.map((event) => {
    state = replay.evolve(state, event);
    const after = replay.represent(state);
    const step = { event, before, after };
    before = after;
    return step;
  });
}

/** What an "as of" answer needs: the state after all the events, and the newest of them. */
export interface ReplayedState<State> {
  readonly state: State;
  readonly representation: Representation | undefined;
  /** The last event folded (the answer stands at its position); undefined when there was none. */
  readonly last: RecordedEvent | undefined;
}

export function replayState<State>(
  events: readonly RecordedEvent[],
  replay: Replay<State>,
): ReplayedState<State> {
  const state = events.reduce(replay.evolve, replay.initial());
  return { state, representation: replay.represent(state), last: events.at(-1) };
}
