import { type GlobalPosition, comparePositions } from '#shared/eventStore/eventStore';
import type { ProjectionProgress } from '#shared/projections/projectionProgress';

export interface ChangeAwareCacheOptions<V> {
  /** Whether a projector change key ("species:3", "brain:12", …) may change a cached answer. "*" always does. */
  readonly dependsOn: (changeKey: string) => boolean;
  /** Answers kept; the oldest goes first. */
  readonly maxEntries: number;
  /** With `weigh`: the most the kept answers may weigh together (e.g. bytes); 0 keeps none. */
  readonly maxWeight?: number;
  readonly weigh?: (value: V) => number;
  /**
   * When answers start to depend on the clock as well (an embargo ends: EmbargoClock): asked before
   * each load, the time (ms since the epoch; Infinity: never) from which the loaded answer is no
   * longer served. Asked before, not after, so that an end falling during the load still counts.
   */
  readonly expiresAt?: (now: GlobalPosition) => Promise<number>;
  /** For an answer that is itself a time: the time from which it is no longer served. */
  readonly validUntil?: (value: V) => number;
}

interface Entry<V> {
  readonly value: Promise<V>;
  /** Served until `until` (ms since the epoch); Infinity while loading and when nothing ends it. */
  readonly expiry: { until: number };
  /** The read models' position (ReadModelPosition) just before the answer was loaded. */
  readonly loadedAt: GlobalPosition;
  /** Known once the load has answered. */
  weight: number;
  /** Who waits for the load, while it runs (undefined once it has settled). */
  askers: Askers | undefined;
}

/** The askers of one load: it is aborted when every one of them has gone (their signals aborted). */
interface Askers {
  readonly controller: AbortController;
  waiting: number;
  /** An asker without a signal waits whatever happens: the load is never aborted then. */
  unbounded: boolean;
}

/**
 * Read-model answers (a brains page, a filter's count, a species name's ids) kept in this process.
 * Callers pass `now`, the read models' position read from the database after their request
 * arrived (ReadModelPosition). A kept answer is served when nothing was committed since it was
 * loaded, or when this process has heard of every change up to `now` (ProjectionProgress, which
 * reports the changed rows' keys before releasing any read-your-writes waiter) and none of them was
 * one the answer depends on: those drop it at once. A change committed but not yet heard of (a
 * notification in flight, a listener reconnecting) makes it load again, so an answer is never
 * older than what the database held when its request arrived.
 *
 * Concurrent asks for one key share one load; a load that overlapped an invalidation answers its
 * callers but is not kept, since it may have read the rows from before the change. An ask may
 * bring a signal (its request's: the client hung up); when every asker of a running load has gone,
 * the signal the load was given aborts and the load is forgotten at once, so the next ask starts
 * its own rather than joining one being stopped.
 */
export class ChangeAwareCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private generation = 0;
  private weight = 0;

  constructor(
    private readonly progress: ProjectionProgress,
    private readonly options: ChangeAwareCacheOptions<V>,
  ) {
    progress.onChange((keys) => {
      if (keys.some((key) => key === '*' || options.dependsOn(key))) this.invalidate();
    });
  }

  get size(): number {
    return this.entries.size;
  }

  get(
    key: string,
    now: GlobalPosition,
    load: (signal: AbortSignal) => Promise<V>,
    signal?: AbortSignal,
  ): Promise<V> {
    const cached = this.entries.get(key);
    if (cached && this.current(cached, now)) return this.join(key, cached, signal);
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    const generation = this.generation;
    const expiry = { until: Infinity };
    const askers: Askers = { controller: new AbortController(), waiting: 0, unbounded: false };
    const entry: Entry<V> = {
      value: this.load(expiry, now, () => load(askers.controller.signal)),
      loadedAt: now,
      weight: 0,
      expiry,
      askers,
    };
    const settled = (): void => {
      entry.askers = undefined;
    };
    entry.value.then(settled, settled);
    if (this.options.maxEntries <= 0 || this.options.maxWeight === 0) return this.join(key, entry, signal);
    this.remove(key);
    this.entries.set(key, entry);
    const forget = (): void => {
      if (this.entries.get(key) === entry) this.remove(key);
    };
    entry.value.then((value) => {
      if (this.generation !== generation || this.entries.get(key) !== entry) return forget();
      entry.weight = this.options.weigh?.(value) ?? 0;
      this.weight += entry.weight;
      this.evictOverflow();
    }, forget);
    this.evictOverflow();
    return this.join(key, entry, signal);
  }

  /** `entry`'s value for one more asker, who may go before it is loaded (`signal`). */
  private join(key: string, entry: Entry<V>, signal: AbortSignal | undefined): Promise<V> {
    const askers = entry.askers;
    if (!askers) return entry.value;
    if (!signal) {
      askers.unbounded = true;
      return entry.value;
    }
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    askers.waiting++;
    signal.addEventListener(
      'abort',
      () => {
        askers.waiting--;
        if (askers.waiting > 0 || askers.unbounded || entry.askers !== askers) return;
        if (this.entries.get(key) === entry) this.remove(key);
        askers.controller.abort(signal.reason);
      },
      { once: true },
    );
    return entry.value;
  }

  private async load(expiry: { until: number }, now: GlobalPosition, load: () => Promise<V>): Promise<V> {
    const { expiresAt, validUntil } = this.options;
    if (expiresAt) expiry.until = await expiresAt(now);
    const value = await load();
    if (validUntil) expiry.until = Math.min(expiry.until, validUntil(value));
    return value;
  }

  invalidate(): void {
    this.generation++;
    this.entries.clear();
    this.weight = 0;
  }

  private current(entry: Entry<V>, now: GlobalPosition): boolean {
    if (Date.now() >= entry.expiry.until) return false;
    return comparePositions(entry.loadedAt, now) >= 0 || comparePositions(this.progress.position, now) >= 0;
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.weight -= entry.weight;
  }

  /** Oldest first, until both bounds hold. */
  private evictOverflow(): void {
    const { maxEntries, maxWeight = Infinity } = this.options;
    for (const key of this.entries.keys()) {
      if (this.entries.size <= maxEntries && this.weight <= maxWeight) return;
      this.remove(key);
    }
  }
}
