import { createHash } from 'node:crypto';

/**
 * Uniqueness lives in the event store: one stream per reserved value (email, username, category
 * name...). Reserving appends to it with "no stream" (or the exact revision seen), so two requests
 * can never both hold one value, on PostgreSQL and on EventStoreDB alike.
 */
export type ValueReserved = {
  readonly type: 'ValueReserved';
  readonly data: {
    readonly scope: string;
    readonly value: string;
    readonly ownerId: string;
    readonly reservedAt: string;
  };
};
export type ReservationReleased = {
  readonly type: 'ReservationReleased';
  readonly data: { readonly scope: string; readonly ownerId: string; readonly releasedAt: string };
};
export type ReservationEvent = ValueReserved | ReservationReleased;

export type ReservationState =
  | { readonly status: 'free' }
  | { readonly status: 'held'; readonly ownerId: string; readonly reservedAt: string };

export const initialReservationState = (): ReservationState => ({ status: 'free' });

export function evolveReservation(_state: ReservationState, event: ReservationEvent): ReservationState {
  return event.type === 'ValueReserved'
    ? { status: 'held', ownerId: event.data.ownerId, reservedAt: event.data.reservedAt }
    : { status: 'free' };
}

/** Values are compared case-insensitively; the stream name hides the raw value (emails are personal data). */
export function reservationStreamName(scope: string, value: string): string {
  const digest = createHash('sha256').update(value.trim().toLowerCase()).digest('hex').slice(0, 40);
  return `reservation_${scope}-${digest}`;
}

export type ReserveValue = {
  readonly type: 'ReserveValue';
  readonly data: {
    readonly scope: string;
    readonly value: string;
    readonly ownerId: string;
    readonly now: string;
    /**
     * Whether the current holder's aggregate exists. A holder whose aggregate never appeared
     * (the process died between reserving and creating) loses the value once the grace period passed.
     */
    readonly holderExists: boolean;
    readonly abandonedAfterMs: number;
  };
};

export type ReserveOutcome =
  { readonly reserved: true; readonly events: ReservationEvent[] } | { readonly reserved: false };

export function decideReserve({ data }: ReserveValue, state: ReservationState): ReserveOutcome {
  const reserve = (): ReserveOutcome => ({
    reserved: true,
    events: [
      {
        type: 'ValueReserved',
        data: { scope: data.scope, value: data.value, ownerId: data.ownerId, reservedAt: data.now },
      },
    ],
  });
  if (state.status === 'free') return reserve();
  if (state.ownerId === data.ownerId) return { reserved: true, events: [] };
  const abandoned =
    !data.holderExists && Date.parse(data.now) - Date.parse(state.reservedAt) > data.abandonedAfterMs;
  return abandoned ? reserve() : { reserved: false };
}

export function decideRelease(
  ownerId: string,
  scope: string,
  now: string,
  state: ReservationState,
): ReservationEvent[] {
  if (state.status !== 'held' || state.ownerId !== ownerId) return [];
  return [{ type: 'ReservationReleased', data: { scope, ownerId, releasedAt: now } }];
}
