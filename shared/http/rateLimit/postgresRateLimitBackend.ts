import type { ClientRateLimitInfo, Store } from 'express-rate-limit';
import type { Pool } from 'pg';
import type { Logger } from '#shared/logging/logger';
import { abortableSleep } from '#shared/runtime/abortableSleep';
import type { LoopBody, LoopMetrics, LoopStatus, SupervisedLoop } from '#shared/runtime/supervisedLoop';
import { startSupervisedLoop } from '#shared/runtime/supervisedLoop';
import {
  type HitEntry,
  type SyncPolicy,
  entryId,
  estimatedTotal,
  mustSync,
  newEntry,
  resolveSyncPolicy,
} from './hitEntry';
import { type RateLimitBackend, windowStartOf } from './rateLimitBackend';
import { MIGRATE_SQL, PURGE_SQL, RESET_KEY_SQL, addHits } from './rateLimitSql';

export interface PostgresRateLimitOptions extends Partial<SyncPolicy> {
  /** Owned by the caller: close() does not end it. */
  readonly pool: Pick<Pool, 'query'>;
  readonly logger?: Logger;
  readonly metrics?: LoopMetrics;
  /** How often local counts are sent in one batch statement (default 250 ms). */
  readonly flushIntervalMs?: number;
  /** How often ended windows are deleted (default 60 s). */
  readonly purgeIntervalMs?: number;
  readonly now?: () => number;
}

export const RATE_LIMIT_SYNC_LOOP = 'rate_limit_sync';

/**
 * Rate-limit counts shared by every instance through one PostgreSQL table (fixed windows keyed by
 * bucket, key and window start). An ordinary request costs no database round trip: hits are
 * counted locally and sent in batches; see mustSync for when a hit is decided synchronously.
 * Sending and purging run in a supervised loop: during a database outage requests are still
 * answered (fail open, counted locally, sent once the database is back) and the outage is logged
 * once.
 */
export class PostgresRateLimitBackend implements RateLimitBackend {
  private readonly entries = new Map<string, HitEntry>();
  private readonly dirty = new Set<HitEntry>();
  private readonly policy: SyncPolicy;
  private readonly now: () => number;
  private readonly loop: SupervisedLoop;
  private flushing: Promise<void> | undefined;

  constructor(private readonly options: PostgresRateLimitOptions) {
    this.policy = resolveSyncPolicy(options);
    this.now = options.now ?? Date.now;
    this.loop = startSupervisedLoop({
      name: RATE_LIMIT_SYNC_LOOP,
      body: (loop) => this.sync(loop),
      logger: options.logger,
      metrics: options.metrics,
    });
  }

  /** State of the loop that sends counts (for /health/ and tests). */
  syncStatus(): LoopStatus {
    return this.loop.status();
  }

  /** Creates the table (idempotent; safe from several instances at once). */
  async migrate(): Promise<void> {
    await this.options.pool.query(MIGRATE_SQL);
  }

  store(bucket: string, limit: number, windowMs: number): Store {
    return {
      localKeys: false,
      prefix: bucket,
      increment: (key) => this.hit(bucket, key, limit, windowMs),
      decrement: (key) => this.adjust(bucket, key, windowMs, -1),
      resetKey: (key) => this.resetKey(bucket, key),
    };
  }

  hit(
    bucket: string,
    key: string,
    limit: number,
    windowMs: number,
  ): ClientRateLimitInfo | Promise<ClientRateLimitInfo> {
    const now = this.now();
    const entry = this.entryFor(bucket, key, windowStartOf(now, windowMs), windowMs, limit);
    if (mustSync(entry, now, this.policy)) return this.syncHit(entry, now);
    entry.pending += 1;
    this.dirty.add(entry);
    return { totalHits: estimatedTotal(entry), resetTime: new Date(entry.windowEnd) };
  }

  /**
   * Sends everything counted locally in one statement and learns the global totals back. Never
   * rejects: what could not be sent stays counted locally (the sync loop reports the outage).
   */
  flush(): Promise<void> {
    return this.flushOrThrow().catch(() => undefined);
  }

  /** Forgets ended windows, here and in the table. */
  purge(): Promise<void> {
    return this.purgeOrThrow().catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.loop.stop();
    await this.flushOrThrow().catch((error: unknown) =>
      this.options.logger?.warn('rate-limit counts could not be sent before closing', { error }),
    );
  }

  private async sync({ signal, up }: LoopBody): Promise<void> {
    const purgeEvery = this.options.purgeIntervalMs ?? 60_000;
    let purgeAt = Date.now() + purgeEvery;
    while (!signal.aborted) {
      await this.flushOrThrow();
      if (Date.now() >= purgeAt) {
        await this.purgeOrThrow();
        purgeAt = Date.now() + purgeEvery;
      }
      up();
      await abortableSleep(this.options.flushIntervalMs ?? 250, signal);
    }
  }

  private flushOrThrow(): Promise<void> {
    this.flushing ??= this.sendBatch().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async purgeOrThrow(): Promise<void> {
    const now = this.now();
    for (const [id, entry] of this.entries) {
      if (entry.windowEnd < now && entry.pending === 0 && entry.inFlight === 0) this.entries.delete(id);
    }
    await this.options.pool.query(PURGE_SQL);
  }

  private entryFor(bucket: string, key: string, start: number, windowMs: number, limit: number): HitEntry {
    const id = entryId(bucket, key, start);
    let entry = this.entries.get(id);
    if (!entry) {
      entry = newEntry(bucket, key, start, windowMs, limit);
      this.entries.set(id, entry);
    }
    return entry;
  }

  /**
   * The database orders this hit among all instances' hits: its total is the answer. Hits counted
   * here while waiting came later, and other statements still in flight commit later.
   */
  private async syncHit(entry: HitEntry, now: number): Promise<ClientRateLimitInfo> {
    if (this.loop.status().state === 'retrying') {
      // The database is known to be down: do not make the request wait for a connection attempt.
      entry.pending += 1;
      this.dirty.add(entry);
      return { totalHits: estimatedTotal(entry), resetTime: new Date(entry.windowEnd) };
    }
    const taken = entry.pending + 1;
    entry.pending = 0;
    entry.inFlight += taken;
    const resetTime = new Date(entry.windowEnd);
    let total: number | undefined;
    try {
      total = (await addHits(this.options.pool, [entry], [taken]))[0]?.hits;
    } catch {
      // Counted locally below; the sync loop's next flush meets the same fault and reports it.
    } finally {
      entry.inFlight -= taken;
    }
    if (total === undefined) {
      // Fail open: a database hiccup must not take the API down; the hits are sent later.
      entry.pending += taken;
      this.dirty.add(entry);
      return { totalHits: estimatedTotal(entry), resetTime };
    }
    entry.synced = Math.max(entry.synced, total);
    entry.syncedAt = now;
    return { totalHits: total, resetTime };
  }

  private async sendBatch(): Promise<void> {
    const batch = [...this.dirty].filter((entry) => entry.pending !== 0);
    this.dirty.clear();
    if (batch.length === 0) return;
    const taken = batch.map((entry) => entry.pending);
    batch.forEach((entry, i) => {
      entry.pending = 0;
      entry.inFlight += taken[i]!;
    });
    const now = this.now();
    try {
      const totals = new Map(
        (await addHits(this.options.pool, batch, taken)).map((r) => [
          entryId(r.bucket, r.key, Number(r.window_start)),
          r.hits,
        ]),
      );
      for (const entry of batch) {
        entry.synced = Math.max(entry.synced, totals.get(entry.id) ?? entry.synced);
        entry.syncedAt = now;
      }
    } catch (error) {
      batch.forEach((entry, i) => {
        entry.pending += taken[i]!;
        this.dirty.add(entry);
      });
      throw error;
    } finally {
      batch.forEach((entry, i) => (entry.inFlight -= taken[i]!));
    }
  }

  private adjust(bucket: string, key: string, windowMs: number, delta: number): void {
    const entry = this.entries.get(entryId(bucket, key, windowStartOf(this.now(), windowMs)));
    if (!entry) return;
    entry.pending += delta;
    this.dirty.add(entry);
  }

  private async resetKey(bucket: string, key: string): Promise<void> {
    for (const [id, entry] of this.entries)
      if (entry.bucket === bucket && entry.key === key) this.entries.delete(id);
    await this.options.pool.query(RESET_KEY_SQL, [bucket, key]);
  }
}
