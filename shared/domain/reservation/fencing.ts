/**
 * Fencing an abandoned reservation holder. A holder that reserved a value and then stalled past the
 * grace period may still wake up and create its aggregate. Before a reservation is taken over from
 * it, its (still empty) stream is fenced: StreamFenced is appended there with "no stream" expected.
 * Either the fence lands first, and the holder's create then fails, or the holder's create lands
 * first, and the fence fails, so the value is not taken over. Never both.
 */
export const STREAM_FENCED = 'StreamFenced';

export type StreamFenced = {
  readonly type: typeof STREAM_FENCED;
  readonly data: {
    readonly reason: 'reservation_taken_over';
    readonly scope: string;
    /** The stream that took the reservation over. */
    readonly takenOverBy: string;
    readonly fencedAt: string;
  };
};

/** What an owner stream holds, judged from its first event. */
export type HolderStatus = 'absent' | 'exists' | 'fenced';

export function holderStatus(firstEventType: string | undefined): HolderStatus {
  if (firstEventType === undefined) return 'absent';
  return firstEventType === STREAM_FENCED ? 'fenced' : 'exists';
}
