import type pg from 'pg';
import type { UnitOfWork } from '#shared/eventStore/eventStore';
import { atomicIdempotency } from './atomicIdempotency';
import { claimingIdempotency } from './claimingIdempotency';
import { DEFAULT_IDEMPOTENCY_SETTINGS, type Idempotency, type IdempotencySettings } from './idempotency';
import { purgeExpired } from './idempotencyRecords';

export type IdempotencyOptions = Partial<IdempotencySettings> & {
  /** Claims older than this are taken over (fallback only); default 5 minutes. */
  readonly staleClaimMs?: number;
  /** Expired records are deleted at most this often, by a request that comes along (10 min). */
  readonly purgeEveryMs?: number;
} & (
    | { readonly unitOfWork: UnitOfWork; readonly pool?: undefined }
    /** No unit of work (EventStoreDB): records live in this database, without atomicity. */
    | { readonly unitOfWork?: undefined; readonly pool: pg.Pool }
  );

/** Idempotency-Key handling on the event store's unit of work when it has one, else the fallback. */
export function createIdempotency(options: IdempotencyOptions): Idempotency {
  const settings: IdempotencySettings = {
    retentionMs: options.retentionMs ?? DEFAULT_IDEMPOTENCY_SETTINGS.retentionMs,
    inProgressWaitMs: options.inProgressWaitMs ?? DEFAULT_IDEMPOTENCY_SETTINGS.inProgressWaitMs,
    onCommitted: options.onCommitted,
  };
  const { unitOfWork, pool } = options;
  const inner = unitOfWork
    ? atomicIdempotency(unitOfWork, settings)
    : claimingIdempotency(pool, { ...settings, staleClaimMs: options.staleClaimMs ?? 300_000 });
  const purge = unitOfWork
    ? () => unitOfWork.run((sql) => purgeExpired(sql, settings.retentionMs))
    : () => purgeExpired(pool, settings.retentionMs);
  const purgeEveryMs = options.purgeEveryMs ?? 600_000;
  let lastPurge = Date.now();
  return {
    ensureSchema: () => inner.ensureSchema(),
    execute(request, handler) {
      if (Date.now() - lastPurge >= purgeEveryMs) {
        lastPurge = Date.now();
        void purge().catch(() => undefined); // the next interval tries again
      }
      return inner.execute(request, handler);
    },
  };
}
