import type pg from 'pg';
import { inTransaction } from '#shared/infra/postgres/inTransaction';
import type { Reply } from '#shared/http/routeSpec';
import { type Idempotency, type IdempotencySettings, sleep } from './idempotency';
import { IdempotencyKeyInUseError } from './idempotencyErrors';
import {
  claimKey,
  completeClaim,
  ensureIdempotencySchema,
  findRecord,
  releaseClaim,
} from './idempotencyRecords';
import { recordOf, replayOf } from './recordedReply';
import { deriveRecordKeys } from './recordKeys';
import { requestFingerprint } from './requestFingerprint';

export interface ClaimingSettings extends IdempotencySettings {
  /** A claim older than this is taken to be from a process that died, and is taken over (5 min). */
  readonly staleClaimMs: number;
}

/**
 * The fallback where the event store cannot share a transaction (EventStoreDB): claim the key,
 * run the handler, then record its reply, three separate steps. Duplicates that arrive while the
 * first request runs still wait or get 409, and a completed request is replayed. Not covered: a
 * crash between the handler's effect and the record. Its claim then looks in progress until it is
 * stale, and a retry after that runs the request again (a second effect is possible).
 */
export function claimingIdempotency(pool: pg.Pool, settings: ClaimingSettings): Idempotency {
  return {
    ensureSchema: () => inTransaction(pool, ensureIdempotencySchema),

    async execute({ key, scope, request }, handler): Promise<Reply> {
      const keys = deriveRecordKeys(scope, key);
      const deadline = Date.now() + settings.inProgressWaitMs;
      while (!(await claimKey(pool, keys.lookup, settings.retentionMs, settings.staleClaimMs))) {
        const existing = await findRecord(pool, keys.lookup, settings.retentionMs);
        if (existing?.state === 'completed') return replayOf(keys, existing, request);
        if (existing && Date.now() >= deadline) throw new IdempotencyKeyInUseError();
        if (existing) await sleep(25 + Math.random() * 75);
      }
      let reply: Reply;
      try {
        reply = await handler();
      } catch (error) {
        await releaseClaim(pool, keys.lookup).catch(() => undefined);
        throw error;
      }
      await completeClaim(pool, keys.lookup, recordOf(keys, await requestFingerprint(keys, request), reply));
      settings.onCommitted?.();
      return reply;
    },
  };
}
