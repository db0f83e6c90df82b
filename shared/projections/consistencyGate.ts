import type { GlobalPosition } from '#shared/eventStore/eventStore';

/**
 * Waits until the read models serving this process have applied events up to a position
 * (read-your-writes). ProjectionProgress is the one implementation; the HTTP edge waits on it.
 */
export interface ConsistencyGate {
  /** Resolves true when reached, false when the bound elapsed first. */
  waitFor(position: GlobalPosition, timeoutMs?: number): Promise<boolean>;
}
