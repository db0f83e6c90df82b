import type { ReservationEvent, ReserveValue } from './reservation';
import { decideRelease, decideReserve, evolveReservation, initialReservationState } from './reservation';

const GRACE_MS = 60_000;
const reservedAt = '2026-01-01T00:00:00.000Z';
const afterGrace = '2026-01-01T00:01:00.001Z';
const withinGrace = '2026-01-01T00:00:59.999Z';

const heldBy = (ownerId: string): ReservationEvent => ({
  type: 'ValueReserved',
  data: { scope: 'email', value: 'ada@example.org', ownerId, reservedAt },
});

function given(...events: ReservationEvent[]) {
  const state = events.reduce(evolveReservation, initialReservationState());
  return {
    whenReserving: (data: Partial<ReserveValue['data']>) =>
      decideReserve(
        {
          type: 'ReserveValue',
          data: {
            scope: 'email',
            value: 'ada@example.org',
            ownerId: 'user-2',
            now: withinGrace,
            holderExists: true,
            abandonedAfterMs: GRACE_MS,
            ...data,
          },
        },
        state,
      ),
    state,
  };
}

const reservedBy = (ownerId: string, now: string) => ({
  reserved: true,
  events: [
    { type: 'ValueReserved', data: { scope: 'email', value: 'ada@example.org', ownerId, reservedAt: now } },
  ],
});

describe('reservation decider', () => {
  test('a free value is reserved for the asking owner', () => {
    expect(given().whenReserving({ now: reservedAt })).toEqual(reservedBy('user-2', reservedAt));
  });

  test('a value released by its holder is free again', () => {
    const released: ReservationEvent = {
      type: 'ReservationReleased',
      data: { scope: 'email', ownerId: 'user-1', releasedAt: reservedAt },
    };
    expect(given(heldBy('user-1'), released).whenReserving({})).toEqual(reservedBy('user-2', withinGrace));
  });

  test('the same owner asking again holds it already: reserved, nothing to append', () => {
    expect(given(heldBy('user-2')).whenReserving({ now: afterGrace, holderExists: false })).toEqual({
      reserved: true,
      events: [],
    });
  });

  test('a holder whose aggregate exists keeps the value, however old the reservation', () => {
    expect(given(heldBy('user-1')).whenReserving({ now: afterGrace, holderExists: true })).toEqual({
      reserved: false,
    });
  });

  test('a holder whose aggregate never appeared keeps the value during the grace period', () => {
    expect(given(heldBy('user-1')).whenReserving({ now: withinGrace, holderExists: false })).toEqual({
      reserved: false,
    });
  });

  test('an abandoned holder (no aggregate after the grace period) is taken over', () => {
    const { whenReserving } = given(heldBy('user-1'));
    expect(whenReserving({ now: afterGrace, holderExists: false })).toEqual(reservedBy('user-2', afterGrace));
  });

  test('the takeover is a new holder: the stream now names the new owner', () => {
    const takeover = reservedBy('user-2', afterGrace).events[0] as ReservationEvent;
    expect(given(heldBy('user-1'), takeover).state).toEqual({
      status: 'held',
      ownerId: 'user-2',
      reservedAt: afterGrace,
    });
  });

  test('only the holder can release', () => {
    const { state } = given(heldBy('user-1'));
    expect(decideRelease('user-2', 'email', afterGrace, state)).toEqual([]);
    expect(decideRelease('user-1', 'email', afterGrace, state)).toEqual([
      { type: 'ReservationReleased', data: { scope: 'email', ownerId: 'user-1', releasedAt: afterGrace } },
    ]);
    expect(decideRelease('user-1', 'email', afterGrace, initialReservationState())).toEqual([]);
  });
});
