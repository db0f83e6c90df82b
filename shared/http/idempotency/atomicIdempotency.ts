import { ConflictError } from '#shared/errors/httpErrors';
import { UnitOfWorkConflictError, type UnitOfWork } from '#shared/eventStore/eventStore';
import type { SqlExecutor } from '#shared/eventStore/postgres/sqlExecutor';
import type { Reply } from '#shared/http/routeSpec';
import { type Idempotency, type IdempotencySettings, sleep } from './idempotency';
import { IdempotencyKeyInUseError } from './idempotencyErrors';
import { ensureIdempotencySchema, findRecord, insertCompleted, lockAndCheck } from './idempotencyRecords';
import { recordOf, replayOf } from './recordedReply';
import { deriveRecordKeys, type RecordKeys } from './recordKeys';
import { requestFingerprint } from './requestFingerprint';

/** The key turned out to be recorded by a request that committed first. */
class AlreadyRecorded extends Error {}

/** Reruns of a whole handler that PostgreSQL asked to retry (lock cycle, order guard). */
const MAX_RUNS = 5;

/**
 * Exactly-once per key on a store with a unit of work: the handler's appends and the record of its
 * reply commit in one transaction, so no crash can leave one without the other. At the
 * transaction's first statement the key's advisory lock is taken and the record checked again, so
 * a concurrent duplicate (another process, too) may start its handler, but its first statement
 * waits until the first request has committed (bounded, then 409), finds the record, and the
 * duplicate's unit rolls back and replays it. Effects happen once; the lock is held only from the
 * first statement to the commit, never while a handler streams an upload.
 */
export function atomicIdempotency(unitOfWork: UnitOfWork, settings: IdempotencySettings): Idempotency {
  // One statement, outside a transaction where the unit can (no BEGIN and COMMIT for a look-up).
  const read = unitOfWork.read?.bind(unitOfWork) ?? unitOfWork.run.bind(unitOfWork);
  const find = (keys: RecordKeys) => read((sql) => findRecord(sql, keys.lookup, settings.retentionMs));

  const onBegin = (keys: RecordKeys) => async (sql: SqlExecutor) => {
    const state = await lockAndCheck(
      sql,
      keys.lockId,
      settings.inProgressWaitMs,
      keys.lookup,
      settings.retentionMs,
    );
    if (state === 'busy') throw new IdempotencyKeyInUseError();
    if (state === 'recorded') throw new AlreadyRecorded();
  };

  return {
    ensureSchema: () => unitOfWork.run(ensureIdempotencySchema),

    async execute({ key, scope, request }, handler): Promise<Reply> {
      const keys = deriveRecordKeys(scope, key);
      const earlier = await find(keys);
      if (earlier) return replayOf(keys, earlier, request);
      for (let run = 1; ; run++) {
        try {
          const reply = await unitOfWork.run(
            async (sql) => {
              const reply = await handler();
              const record = recordOf(keys, await requestFingerprint(keys, request), reply);
              if (!(await insertCompleted(sql, keys.lookup, record, settings.retentionMs)))
                throw new AlreadyRecorded(); // rolls this run's effect back
              return reply;
            },
            { onBegin: onBegin(keys) },
          );
          settings.onCommitted?.();
          return reply;
        } catch (error) {
          const rerunnable = request.body.kind !== 'stream' && run < MAX_RUNS;
          if (error instanceof AlreadyRecorded) {
            const recorded = await find(keys);
            if (recorded) return replayOf(keys, recorded, request);
            if (run < MAX_RUNS) continue; // expired in between: run it as new
          }
          if (error instanceof UnitOfWorkConflictError && rerunnable) {
            await sleep(Math.random() * 20 * run);
            continue;
          }
          if (error instanceof UnitOfWorkConflictError || error instanceof AlreadyRecorded)
            throw new ConflictError('The request conflicted with a concurrent one; try again.');
          throw error;
        }
      }
    },
  };
}
