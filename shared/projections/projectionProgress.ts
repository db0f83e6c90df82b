import type { ConsistencyGate } from './consistencyGate';
import type { GlobalPosition } from '#shared/eventStore/eventStore';
import { comparePositions, START } from '#shared/eventStore/eventStore';

export type ChangeListener = (keys: readonly string[]) => void;

/**
 * What this process knows of the live read models' position. Fed by the in-process runner (all-in-one)
 * or by PostgreSQL notifications (a separate query or command API process). Implements the
 * read-your-writes wait: a write's response waits here until its events are readable.
 */
export class ProjectionProgress implements ConsistencyGate {
  private current: GlobalPosition = START;
  private waiters: { position: GlobalPosition; resolve: (reached: boolean) => void }[] = [];
  private readonly changeListeners = new Set<ChangeListener>();
  private readonly waitListeners = new Set<() => void>();

  get position(): GlobalPosition {
    return this.current;
  }

  /**
   * Record that every live read model has applied all events up to `position`, changing the rows
   * named by `changedKeys`. Without them (a checkpoint read, not a notification), a move forward
   * may have changed anything: caches hear "*" before any waiter is released, so a write's
   * response never lets its author read an answer cached from before it.
   */
  advance(position: GlobalPosition, changedKeys?: readonly string[]): void {
    const moved = comparePositions(position, this.current) > 0;
    const keys = changedKeys ?? (moved ? ['*'] : []);
    if (keys.length > 0) for (const listener of this.changeListeners) listener(keys);
    if (!moved) return;
    this.current = position;
    const still: typeof this.waiters = [];
    for (const w of this.waiters) {
      if (comparePositions(w.position, position) <= 0) w.resolve(true);
      else still.push(w);
    }
    this.waiters = still;
  }

  /** Caches subscribe here to drop rows that a projection changed. */
  onChange(listener: ChangeListener): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /**
   * Told whenever a caller starts waiting. A write that got this far reached the database, so a
   * component retrying after an outage (the runner, the listener) may retry now.
   */
  onWait(listener: () => void): () => void {
    this.waitListeners.add(listener);
    return () => this.waitListeners.delete(listener);
  }

  waitFor(position: GlobalPosition, timeoutMs = 5000): Promise<boolean> {
    if (comparePositions(position, this.current) <= 0) return Promise.resolve(true);
    for (const listener of this.waitListeners) listener();
    return new Promise((resolve) => {
      const waiter = {
        position,
        resolve: (reached: boolean) => {
          clearTimeout(timer);
          resolve(reached);
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }
}
