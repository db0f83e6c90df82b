import type { Pool } from 'pg';
import type { EventStore, GlobalPosition } from '#shared/eventStore/eventStore';
import { START, comparePositions, parsePosition } from '#shared/eventStore/eventStore';
import type { Logger } from '#shared/logging/logger';
import { abortableSleep } from '#shared/runtime/abortableSleep';
import { LEDGER_ALGORITHM } from '#shared/audit/ledgerChain';
import { type LedgerHead, ledgerLagEvents, readLedgerHead } from '#shared/audit/ledgerHead';
import { lastLedgerVerification } from '#shared/audit/ledgerVerifications';
import type { LedgerReadings } from '#shared/metrics/ledgerMetrics';

/** How often, at start, the log checks whether the ledger has caught up with the store. */
const CATCH_UP_POLL_MS = 1000;

export interface LedgerHeadLog {
  stop(): void;
}

/**
 * Logs the ledger's head (`ledger head`: position, count, hash) so that a copy of it lives outside
 * the database, where rewriting the events and the ledger together cannot reach it: once the ledger
 * has caught up with the store's head at start, then every `intervalSeconds`, only while this
 * process leads the projection (`leading`). Its timers never keep the process alive; stop() ends it.
 */
export function startLedgerHeadLog(deps: {
  readonly pool: Pool;
  readonly store: EventStore;
  readonly logger: Logger;
  readonly intervalSeconds: number;
  readonly leading: () => boolean;
}): LedgerHeadLog {
  const stopping = new AbortController();
  if (deps.intervalSeconds <= 0) return { stop: () => stopping.abort() };
  const { signal } = stopping;
  let failing = false;
  /** Runs one step; a failure is logged once per outage (the projector reports the outage itself). */
  const attempt = async (step: () => Promise<boolean>): Promise<boolean> => {
    try {
      const done = await step();
      failing = false;
      return done;
    } catch (error) {
      if (!failing) deps.logger.warn('ledger head not read', { error: String(error) });
      failing = true;
      return false;
    }
  };
  const logHead = (head: LedgerHead): void =>
    deps.logger.info('ledger head', {
      position: head.position,
      count: head.count,
      hash: head.hash.toString('hex'),
      algorithm: LEDGER_ALGORITHM,
    });

  void (async () => {
    let target: GlobalPosition | undefined;
    const caughtUp = async (): Promise<boolean> => {
      if (!deps.leading()) return false;
      // The newest committed event: at start the readable head may still lag it (held-back events).
      target ??= await (deps.store.newestPosition ? deps.store.newestPosition() : deps.store.headPosition());
      const head = await readLedgerHead(deps.pool);
      const at = head.position === null ? START : (parsePosition(head.position) ?? START);
      if (comparePositions(at, target) < 0) return false;
      logHead(head);
      return true;
    };
    while (!signal.aborted && !(await attempt(caughtUp)))
      await abortableSleep(CATCH_UP_POLL_MS, signal, { unref: true });
    while (!signal.aborted) {
      await abortableSleep(deps.intervalSeconds * 1000, signal, { unref: true });
      if (!signal.aborted && deps.leading())
        await attempt(async () => {
          logHead(await readLedgerHead(deps.pool));
          return true;
        });
    }
  })();
  return { stop: () => stopping.abort() };
}

/** The ledger gauges' readings (shared/metrics/ledgerMetrics), from the read models' database. */
export async function readLedgerReadings(pool: Pool): Promise<LedgerReadings> {
  const head = await readLedgerHead(pool);
  const [lagEvents, last] = await Promise.all([ledgerLagEvents(pool, head), lastLedgerVerification(pool)]);
  return {
    headSeq: head.count,
    lagEvents,
    lastVerification: last && { ok: last.ok, finishedAt: last.finishedAt },
  };
}
