/** One bucket/key/window as one instance sees it. */
export interface HitEntry {
  readonly id: string;
  readonly bucket: string;
  readonly key: string;
  readonly windowStart: number;
  readonly windowEnd: number;
  readonly limit: number;
  /** Global total (all instances) as last returned by the database. */
  synced: number;
  /** When `synced` was read (ms); 0 = never. */
  syncedAt: number;
  /** Hits counted here and not yet sent. */
  pending: number;
  /** Hits sent in a statement that has not answered yet. */
  inFlight: number;
}

export interface SyncPolicy {
  /** A total read this recently (ms) is trusted to be close to the truth. */
  readonly staleAfterMs: number;
  /** With a fresh total, this share of the remaining headroom may be admitted without asking. */
  readonly localShare: number;
  /** With a stale or unknown total, this (smaller) share; at least one hit. */
  readonly staleShare: number;
}

export const DEFAULT_SYNC_POLICY: SyncPolicy = { staleAfterMs: 1_000, localShare: 0.1, staleShare: 0.02 };

/** Options may carry any subset of the policy (undefined meaning "the default"). */
export function resolveSyncPolicy(options: Partial<SyncPolicy>): SyncPolicy {
  return {
    staleAfterMs: options.staleAfterMs ?? DEFAULT_SYNC_POLICY.staleAfterMs,
    localShare: options.localShare ?? DEFAULT_SYNC_POLICY.localShare,
    staleShare: options.staleShare ?? DEFAULT_SYNC_POLICY.staleShare,
  };
}

export function entryId(bucket: string, key: string, windowStart: number): string {
  return `${bucket}\n${key}\n${windowStart}`;
}

export function newEntry(
  bucket: string,
  key: string,
  windowStart: number,
  windowMs: number,
  limit: number,
): HitEntry {
  return {
    id: entryId(bucket, key, windowStart),
    bucket,
    key,
    windowStart,
    windowEnd: windowStart + windowMs,
    limit,
    synced: 0,
    syncedAt: 0,
    pending: 0,
    inFlight: 0,
  };
}

/** Best local estimate of the global total, counting hits not yet (or not yet known to be) stored. */
export function estimatedTotal(entry: HitEntry): number {
  return entry.synced + entry.inFlight + entry.pending;
}

/**
 * Whether the next hit must ask the database (synchronously) before it is admitted.
 *
 * Far from the limit, hits are only counted here and sent in the next batch. Every instance may
 * admit at most a small share of the headroom it knows of before it has to look again, so all
 * instances together overshoot by a few hits at most; close to the limit the share rounds down
 * to zero and every hit is decided by the database. Once the global total is at the limit, the
 * answer cannot change within the window (counts only grow), so no more round trips are needed.
 */
export function mustSync(entry: HitEntry, now: number, policy: SyncPolicy): boolean {
  if (entry.synced >= entry.limit) return false;
  const headroom = entry.limit - entry.synced;
  const fresh = entry.syncedAt !== 0 && now - entry.syncedAt <= policy.staleAfterMs;
  const allowance = fresh
    ? Math.floor(headroom * policy.localShare)
    : Math.max(1, Math.floor(headroom * policy.staleShare));
  return entry.pending + entry.inFlight + 1 > allowance;
}
