import { type EventStore, WrongExpectedRevisionError } from '#shared/eventStore/eventStore';
import type { CommandContext } from './commandContext';
import { handleCommand, loadAggregate, toNewEvents } from './handleCommand';
import {
  type HolderStatus,
  type StreamFenced,
  STREAM_FENCED,
  holderStatus,
} from '#shared/domain/reservation/fencing';
import type { ReservationEvent, ReservationState } from '#shared/domain/reservation/reservation';
import {
  decideRelease,
  decideReserve,
  evolveReservation,
  initialReservationState,
  reservationStreamName,
} from '#shared/domain/reservation/reservation';

const reservationDecider = { initialState: initialReservationState, evolve: evolveReservation };

export interface ReserveRequest {
  readonly scope: string;
  readonly value: string;
  /** The aggregate stream that will own the value (e.g. "user-7"). */
  readonly ownerStream: string;
  readonly now: Date;
}

/** A reservation whose owner never got created is taken over after this long. */
const ABANDONED_AFTER_MS = 60_000;

/**
 * True when `ownerStream` now holds the value; false when someone else does. Taking a value over from
 * an abandoned holder first fences the holder's stream (see fencing.ts), so a holder that was only
 * slow can no longer create its aggregate with the value.
 */
export async function reserveValue(
  store: EventStore,
  request: ReserveRequest,
  ctx: CommandContext,
): Promise<boolean> {
  let reserved = false;
  await handleCommand<ReservationState, ReservationEvent>(
    store,
    reservationStreamName(request.scope, request.value),
    reservationDecider,
    async (state) => {
      const holder =
        state.status === 'held' && state.ownerId !== request.ownerStream
          ? await holderOf(store, state.ownerId)
          : 'absent';
      const outcome = decideReserve(
        {
          type: 'ReserveValue',
          data: {
            scope: request.scope,
            value: request.value,
            ownerId: request.ownerStream,
            now: request.now.toISOString(),
            holderExists: holder === 'exists',
            abandonedAfterMs: ABANDONED_AFTER_MS,
          },
        },
        state,
      );
      reserved = outcome.reserved;
      if (!outcome.reserved) return [];
      const takingOver = state.status === 'held' && outcome.events.length > 0;
      if (takingOver && holder === 'absent' && !(await fence(store, state.ownerId, request, ctx))) {
        reserved = false;
        return [];
      }
      return outcome.events;
    },
    ctx,
  );
  return reserved;
}

async function holderOf(store: EventStore, ownerStream: string): Promise<HolderStatus> {
  const [first] = await store.readStream(ownerStream, { maxCount: 1 });
  return holderStatus(first?.type);
}

/** True when the holder's stream is fenced now (by us or by another taker); false when it was created. */
async function fence(
  store: EventStore,
  holderStream: string,
  request: ReserveRequest,
  ctx: CommandContext,
): Promise<boolean> {
  const event: StreamFenced = {
    type: STREAM_FENCED,
    data: {
      reason: 'reservation_taken_over',
      scope: request.scope,
      takenOverBy: request.ownerStream,
      fencedAt: request.now.toISOString(),
    },
  };
  try {
    await store.appendToStream(holderStream, toNewEvents([event], ctx), { expectedRevision: 'no_stream' });
    return true;
  } catch (error) {
    if (!(error instanceof WrongExpectedRevisionError)) throw error;
    return (await holderOf(store, holderStream)) === 'fenced';
  }
}

export async function releaseValue(
  store: EventStore,
  request: ReserveRequest,
  ctx: CommandContext,
): Promise<void> {
  await handleCommand<ReservationState, ReservationEvent>(
    store,
    reservationStreamName(request.scope, request.value),
    reservationDecider,
    (state) => decideRelease(request.ownerStream, request.scope, request.now.toISOString(), state),
    ctx,
  );
}

/** The owner stream currently holding a value, if any (e.g. login by email). */
export async function findReservationOwner(
  store: EventStore,
  scope: string,
  value: string,
): Promise<string | undefined> {
  const { state } = await loadAggregate(store, reservationStreamName(scope, value), reservationDecider);
  return state.status === 'held' ? state.ownerId : undefined;
}
