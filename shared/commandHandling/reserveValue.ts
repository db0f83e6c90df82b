import type { EventStore } from '../eventStore/eventStore';
import type { CommandContext } from './commandContext';
import { handleCommand, loadAggregate } from './handleCommand';
import type { ReservationEvent, ReservationState } from '../domain/reservation/reservation';
import {
  decideRelease,
  decideReserve,
  evolveReservation,
  initialReservationState,
  reservationStreamName,
} from '../domain/reservation/reservation';

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

/** True when `ownerStream` now holds the value; false when someone else does. */
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
      const holderExists =
        state.status === 'held' && state.ownerId !== request.ownerStream
          ? (await store.readStream(state.ownerId, { maxCount: 1 })).length > 0
          : false;
      const outcome = decideReserve(
        {
          type: 'ReserveValue',
          data: {
            scope: request.scope,
            value: request.value,
            ownerId: request.ownerStream,
            now: request.now.toISOString(),
            holderExists,
            abandonedAfterMs: ABANDONED_AFTER_MS,
          },
        },
        state,
      );
      reserved = outcome.reserved;
      return outcome.reserved ? outcome.events : [];
    },
    ctx,
  );
  return reserved;
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
