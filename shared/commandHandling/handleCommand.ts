import { randomUUID } from 'node:crypto';
import type {
  AppendResult,
  EventStore,
  GlobalPosition,
  NewEvent,
  RecordedEvent,
} from '#shared/eventStore/eventStore';
import { WrongExpectedRevisionError } from '#shared/eventStore/eventStore';
import { ConflictError } from '#shared/domain/domainErrors';
import { STREAM_FENCED } from '#shared/domain/reservation/fencing';
import type { CommandContext } from './commandContext';
import { type Backoff, contentionBackoff } from './contentionBackoff';
import { streamTurnsOf } from './streamTurns';

export interface DomainEvent {
  readonly type: string;
  readonly data: object;
}

export interface Decider<State, Event extends DomainEvent> {
  readonly initialState: () => State;
  readonly evolve: (state: State, event: Event) => State;
}

export interface Loaded<State> {
  readonly state: State;
  /** Revision of the last event, or undefined when the stream does not exist. */
  readonly revision: bigint | undefined;
}

export interface HandleResult<State, Event> {
  readonly state: State;
  readonly events: readonly Event[];
  /** Position of the last appended event; undefined when the decision appended nothing. */
  readonly position: GlobalPosition | undefined;
  /** Stream revision after the command (for ETags); undefined when the stream does not exist. */
  readonly revision: bigint | undefined;
}

export interface HandleOptions<State = unknown> {
  /** The stream revision the caller last saw (If-Match); a mismatch is a 409, never retried. */
  readonly expectedRevision?: bigint;
  /** Paces retries after a lost race and says when to give up; default: contentionBackoff(). */
  readonly backoff?: Backoff;
  /**
   * The stream is new (named by an id just allocated or generated): the first attempt decides on
   * the initial state and appends with `no_stream` without reading the stream, one round trip
   * fewer. Should the stream exist after all, that append fails and the usual cycle runs.
   */
  readonly newStream?: boolean;
  /**
   * The stream's state and revision as the caller last saw them (its own last result, or an event it
   * was delivered): the first attempt decides on them and appends at that revision without reading
   * the stream. Should the stream have moved on, that append fails and the usual cycle runs.
   */
  readonly known?: Loaded<State>;
}

export const SCHEMA_VERSION = 1;

export async function loadAggregate<State, Event extends DomainEvent>(
  store: EventStore,
  streamName: string,
  decider: Decider<State, Event>,
): Promise<Loaded<State>> {
  const recorded = await store.readStream(streamName);
  if (recorded[0]?.type === STREAM_FENCED) {
    // Only a create that stalled for a minute after reserving its values meets this (fencing.ts).
    throw new ConflictError(
      'This request took too long and its reserved values were given to another; try again.',
    );
  }
  // Events arrive upcast to their newest shape (upcastingEventStore, wired where the store is opened).
  const state = recorded.reduce((s, e) => decider.evolve(s, e as unknown as Event), decider.initialState());
  const last: RecordedEvent | undefined = recorded[recorded.length - 1];
  return { state, revision: last?.streamRevision };
}

export function toNewEvents(events: readonly DomainEvent[], ctx: CommandContext): NewEvent[] {
  return events.map((e) => ({
    id: randomUUID(),
    type: e.type,
    data: e.data,
    metadata: { ...ctx, schemaVersion: SCHEMA_VERSION },
  }));
}

/**
 * Load the stream, fold it, decide, append with the revision that was folded. Writers of the stream
 * in this process take turns (streamTurns); a writer elsewhere can still make the append fail, and
 * the whole cycle then runs again on fresh state after a jittered backoff, until the time budget
 * is spent (then 409). A stale If-Match is a 409 at once: retrying cannot help.
 */
export async function handleCommand<State, Event extends DomainEvent>(
  store: EventStore,
  streamName: string,
  decider: Decider<State, Event>,
  decide: (state: State) => readonly Event[] | Promise<readonly Event[]>,
  ctx: CommandContext,
  options: HandleOptions<State> = {},
): Promise<HandleResult<State, Event>> {
  const backoff = options.backoff ?? contentionBackoff();
  const turns = streamTurnsOf(store);
  // In a unit of work the failed append has taken the stream's lock, held until commit: the next
  // attempt cannot lose, so it goes at once, however long the wait for that lock was.
  let lockedRetries = store.unitOfWork?.isActive() ? 2 : 0;
  // Only the first attempt may assume the stream is new, or as the caller knows it.
  let assumed: Loaded<State> | undefined =
    options.expectedRevision !== undefined
      ? undefined
      : options.newStream === true
        ? { state: decider.initialState(), revision: undefined }
        : options.known;
  for (;;) {
    const unread = assumed;
    assumed = undefined;
    const attempt = () => attemptCommand(store, streamName, decider, decide, ctx, options, unread);
    const result = await (turns ? turns.take(streamName, attempt) : attempt());
    if (result !== LOST_RACE) return result;
    if (unread) continue; // the stream was not as assumed: read it this time
    if (options.expectedRevision !== undefined)
      throw new ConflictError('The resource was modified by another request; reload it and try again.');
    if (lockedRetries-- > 0) continue;
    if (!(await backoff.wait()))
      throw new ConflictError('The resource was modified concurrently; try again.');
  }
}

const LOST_RACE = Symbol('lost the race');

async function attemptCommand<State, Event extends DomainEvent>(
  store: EventStore,
  streamName: string,
  decider: Decider<State, Event>,
  decide: (state: State) => readonly Event[] | Promise<readonly Event[]>,
  ctx: CommandContext,
  options: HandleOptions<State>,
  assumed: Loaded<State> | undefined,
): Promise<HandleResult<State, Event> | typeof LOST_RACE> {
  const { state, revision } = assumed ?? (await loadAggregate(store, streamName, decider));
  if (options.expectedRevision !== undefined && options.expectedRevision !== revision) {
    throw new ConflictError('The resource was modified by another request; reload it and try again.');
  }
  const events = await decide(state);
  if (events.length === 0) return { state, events, position: undefined, revision };
  try {
    const result: AppendResult = await store.appendToStream(streamName, toNewEvents(events, ctx), {
      expectedRevision: revision ?? 'no_stream',
    });
    return {
      state: events.reduce(decider.evolve, state),
      events,
      position: result.position,
      revision: result.nextExpectedRevision,
    };
  } catch (error) {
    if (error instanceof WrongExpectedRevisionError) return LOST_RACE;
    throw error;
  }
}
