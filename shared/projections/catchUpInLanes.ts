import type { GlobalPosition, RecordedEvent } from '#shared/eventStore/eventStore';

/** Batches read ahead of the slowest lane at most: bounds the memory of a catch-up. */
export const READ_AHEAD_BATCHES = 4;

export interface LanesPlan<Lane> {
  /** Each lane applies every batch, in order, on its own (a projection's transactions). */
  readonly lanes: readonly Lane[];
  readonly start: GlobalPosition;
  /** The next batch after a position; empty when there is nothing more to apply. */
  readonly read: (after: GlobalPosition) => Promise<readonly RecordedEvent[]>;
  readonly apply: (lane: Lane, batch: readonly RecordedEvent[]) => Promise<void>;
  /** After a lane has applied the last batch (not after a failure); the others may still apply. */
  readonly finish?: (lane: Lane) => Promise<void>;
  /** Events every lane has applied, and the position they all reached. */
  readonly onProgress?: (applied: number, position: GlobalPosition) => void;
  readonly readAhead?: number;
}

/**
 * Reads the events once, in batches, and lets every lane apply them at its own pace, all lanes at
 * once: independent read models rebuild in parallel (each on its own connection) instead of one
 * after the other within each batch, and the slowest one sets the time. Each lane still sees every
 * batch in the global order. The first failure stops all lanes (each one's committed batches stay
 * committed, with their checkpoints) and is thrown once every lane has stopped. Returns the
 * events applied.
 */
export async function catchUpInLanes<Lane>(plan: LanesPlan<Lane>): Promise<number> {
  const readAhead = plan.readAhead ?? READ_AHEAD_BATCHES;
  const batches: (readonly RecordedEvent[] | undefined)[] = [];
  /** Events in batches 0..i, for progress. */
  const appliedAfter: number[] = [];
  /** Where batch i ends. */
  const ends: GlobalPosition[] = [];
  const laneAt = plan.lanes.map(() => 0);
  let read = 0;
  let readDone = false;
  let failure: { error: unknown } | undefined;
  let reported = 0;

  let wake: () => void = () => undefined;
  let changed = new Promise<void>((resolve) => (wake = resolve));
  const bump = (): void => {
    const resolve = wake;
    changed = new Promise<void>((r) => (wake = r));
    resolve();
  };
  const fail = (error: unknown): void => {
    failure ??= { error };
    bump();
  };
  const slowest = (): number => Math.min(...laneAt);

  const reader = async (): Promise<void> => {
    let after = plan.start;
    try {
      while (!failure) {
        while (read - slowest() >= readAhead && !failure) await changed;
        if (failure) break;
        const batch = await plan.read(after);
        if (batch.length === 0) break;
        batches[read] = batch;
        appliedAfter[read] = (appliedAfter[read - 1] ?? 0) + batch.length;
        after = batch[batch.length - 1]!.position;
        ends[read] = after;
        read++;
        bump();
      }
    } catch (error) {
      fail(error);
    } finally {
      readDone = true;
      bump();
    }
  };

  const lane = async (index: number): Promise<void> => {
    try {
      for (let next = 0; ; next++) {
        while (next >= read && !readDone && !failure) await changed;
        if (failure) return;
        if (next >= read) return await plan.finish?.(plan.lanes[index]!);
        await plan.apply(plan.lanes[index]!, batches[next]!);
        laneAt[index] = next + 1;
        const all = slowest();
        if (all > reported) {
          for (let i = reported; i < all; i++) batches[i] = undefined; // every lane is past them
          reported = all;
          plan.onProgress?.(appliedAfter[all - 1]!, ends[all - 1]!);
        }
        bump();
      }
    } catch (error) {
      fail(error);
    }
  };

  await Promise.all([reader(), ...plan.lanes.map((_, i) => lane(i))]);
  if (failure) throw failure.error;
  return appliedAfter[read - 1] ?? 0;
}
