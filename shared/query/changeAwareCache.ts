import type { ProjectionProgress } from '../projections/projectionProgress';

export interface ChangeAwareCacheOptions {
  /** Whether a projector change key ("species:3", "brain:12", …) may change a cached answer. "*" always does. */
  readonly dependsOn: (changeKey: string) => boolean;
  /** Longest life of an answer, whatever was reported (a safety net: changes are reported at once). */
  readonly ttlMs: number;
  /** Answers kept; the oldest goes first. */
  readonly maxEntries: number;
  readonly now?: () => number;
}

interface Entry<V> {
  readonly value: Promise<V>;
  readonly loadedAt: number;
}

/**
 * Small read-model answers (a species name's ids, a filter's count) kept in this process until
 * the projector reports a change they depend on (ProjectionProgress.onChange, which hears of a
 * change before any read-your-writes waiter is released), or `ttlMs` passes. Concurrent asks for
 * one key share one load; a load that overlapped an invalidation answers its callers but is not
 * kept, since it may have read the rows from before the change.
 */
export class ChangeAwareCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private generation = 0;
  private readonly now: () => number;

  constructor(
    progress: ProjectionProgress,
    private readonly options: ChangeAwareCacheOptions,
  ) {
    this.now = options.now ?? Date.now;
    progress.onChange((keys) => {
      if (keys.some((key) => key === '*' || options.dependsOn(key))) this.invalidate();
    });
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string, load: () => Promise<V>): Promise<V> {
    const now = this.now();
    const cached = this.entries.get(key);
    if (cached && now - cached.loadedAt <= this.options.ttlMs) return cached.value;
    const generation = this.generation;
    const entry: Entry<V> = { value: load(), loadedAt: now };
    this.entries.delete(key);
    this.entries.set(key, entry);
    this.evictOverflow();
    const forget = (): void => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    };
    entry.value.then(() => {
      if (this.generation !== generation) forget();
    }, forget);
    return entry.value;
  }

  invalidate(): void {
    this.generation++;
    this.entries.clear();
  }

  private evictOverflow(): void {
    for (const key of this.entries.keys()) {
      if (this.entries.size <= this.options.maxEntries) return;
      this.entries.delete(key);
    }
  }
}
