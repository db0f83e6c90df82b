import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { eventTypeCountsProjection } from '#services/projector/projections/eventTypeCountsProjection';
import { accountsThatCannotLogIn, brokenPromises } from '#tests/support/acknowledgedWrites';
import type { LoadLedger } from '#tests/support/loadLedger';
import {
  appliedEventCounts,
  identityTotals,
  storedEventCounts,
  waitUntilCaughtUp,
} from '#tests/support/readModelAudit';
import { startWriteLoad, type WriteLoad } from '#tests/support/writeLoad';
import { waitFor } from '#tests/support/waitFor';
import { differencesFromFreshRebuild } from './freshRebuild';
import { HEALTH_PATH, LIVENESS_PATH, watchHealth, type HealthSample, type HealthWatch } from './healthWatch';
import { startObservedService, type ObservedService } from './observedService';
import { ProfileProbe, type ProbeAnswer, type WriteThenRead } from './profileProbe';

/**
 * Longer than any outage here (10 s + restart + the runner's back-off): a write appended just
 * before the database stopped is acknowledged only once the read side has it, as on a healthy day.
 * With a shorter bound it would be acknowledged unapplied, and the client's next request (using
 * the token it just got, logging in to the account it just made) could fairly fail on a read model
 * that has not caught up yet. A write that waits it out is logged with a warning under its request id.
 */
export const READ_YOUR_WRITES_TIMEOUT_MS = 20_000;
/** The requirement: /health/ is 200 again within this long after the fault ends. */
export const RECOVERY_BOUND_MS = 20_000;
const CLIENTS = 4;
/** Writes acknowledged before the fault starts, and again after recovery: the load is real on both sides. */
const WRITES_BEFORE_FAULT = 40;
const WRITES_AFTER_RECOVERY = 20;
const LOAD_WAIT_MS = 30_000;
const PROBES_AFTER_RECOVERY = 3;
const CATCH_UP_TIMEOUT_MS = 30_000;

export interface FaultScenario {
  /** The empty database the service runs on. */
  readonly databaseUrl: string;
  /** An empty database on the same server, for the fresh rebuild. */
  readonly scratchDatabaseUrl: string;
  /** Injects the fault under load; resolves once it is over (the database is reachable again). */
  inject(service: ObservedService): Promise<void>;
}

export interface FaultRunReport {
  readonly ledger: LoadLedger;
  readonly faultStartedAt: number;
  readonly recoveredAt: number;
  /** The first /health/ 200 after recovery (within RECOVERY_BOUND_MS), if any. */
  readonly healthyAgain: HealthSample | undefined;
  readonly health: readonly HealthSample[];
  readonly liveness: readonly HealthSample[];
  /** What the probe account's writes got while the fault lasted (until healthy again). */
  readonly duringFault: readonly ProbeAnswer[];
  /** Writes right after recovery, each followed by a plain read. */
  readonly afterRecovery: readonly WriteThenRead[];
  readonly acknowledgedAfterRecovery: number;
  /** null: the service was still running when the checks were done. */
  readonly serviceExit: number | string | null;
  readonly audit: Audit;
}

export interface Audit {
  /** Why the read models did not catch up with the events, if they did not. */
  readonly notCaughtUp: string | undefined;
  readonly appliedEventCounts: Record<string, number>;
  readonly storedEventCounts: Record<string, number>;
  readonly identity: Awaited<ReturnType<typeof identityTotals>>;
  readonly differencesFromRebuild: readonly string[];
  readonly brokenPromises: readonly string[];
  readonly accountsThatCannotLogIn: readonly string[];
}

/**
 * The common frame of every fault test: the all-in-one under write load, health watched, the
 * fault injected, recovery observed (health, a write right after it, the load going on), then the
 * audit of what the database holds. Everything it starts is stopped, even on failure.
 */
export async function runFaultScenario(scenario: FaultScenario): Promise<FaultRunReport> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'catalogue-faults-'));
  const probing = new AbortController();
  let service: ObservedService | undefined;
  let health: HealthWatch | undefined;
  let load: WriteLoad | undefined;
  try {
    service = await startObservedService(serviceEnv(scenario.databaseUrl, dataDir));
    health = watchHealth(service.url);
    const probe = await ProfileProbe.register(service);
    load = startWriteLoad(service.url, CLIENTS, { retryLaterStatuses: new Set([503]) });
    await untilAcknowledged(load, WRITES_BEFORE_FAULT, 'before the fault');

    const probingDuringFault = probe.writeUntil(probing.signal);
    const faultStartedAt = Date.now();
    await scenario.inject(service);
    const recoveredAt = Date.now();
    stillRunning(service, 'during the fault');
    const healthyAgain = await health.firstHealthyAfter(recoveredAt, RECOVERY_BOUND_MS);
    probing.abort();
    // Before the probes after recovery: a late answer must not overwrite their bio.
    const duringFault = await probingDuringFault;

    const afterRecovery: WriteThenRead[] = [];
    for (let i = 0; i < PROBES_AFTER_RECOVERY; i++) afterRecovery.push(await probe.writeThenRead());
    const acknowledgedAtRecovery = load.ledger.acknowledged;
    // Not thrown: reported through acknowledgedAfterRecovery.
    await untilAcknowledged(load, acknowledgedAtRecovery + WRITES_AFTER_RECOVERY, 'after recovery').catch(
      () => undefined,
    );
    await load.stop();
    await health.stop();
    stillRunning(service, 'after recovery');
    return {
      ledger: load.ledger,
      faultStartedAt,
      recoveredAt,
      healthyAgain,
      health: health.samples(HEALTH_PATH),
      liveness: health.samples(LIVENESS_PATH),
      duringFault,
      afterRecovery,
      acknowledgedAfterRecovery: load.ledger.acknowledged - acknowledgedAtRecovery,
      serviceExit: service.exitCode(),
      audit: await audit(scenario, service, load.ledger),
    };
  } catch (error) {
    const tail = service ? `\n--- service output ---\n${service.tail()}` : '';
    throw new Error(`${(error as Error).message}${tail}`, { cause: error });
  } finally {
    probing.abort();
    await load?.stop();
    await health?.stop();
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function serviceEnv(databaseUrl: string, dataDir: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    READ_YOUR_WRITES_TIMEOUT_MS: String(READ_YOUR_WRITES_TIMEOUT_MS),
    LOG_LEVEL: 'info', // one line per request: how a write's warnings are found by its request id
    PASSWORD_HASH_LOG_N: '10',
    RATE_LIMIT_DEFAULT: '1000000/minute',
    RATE_LIMIT_REGISTER: '1000000/hour',
    RATE_LIMIT_LOGIN: '1000000/minute',
    RATE_LIMIT_TOKEN_CREATE: '1000000/hour',
  };
}

/** A crashed service makes every later check fail for the same reason: say it once, clearly. */
function stillRunning(service: ObservedService, when: string): void {
  const exit = service.exitCode();
  if (exit !== null) throw new Error(`the service exited (${String(exit)}) ${when}`);
}

const untilAcknowledged = (load: WriteLoad, count: number, when: string): Promise<number> =>
  waitFor(`${count} writes of the load acknowledged ${when}`, () => load.ledger.acknowledged, {
    timeoutMs: LOAD_WAIT_MS,
    intervalMs: 100,
    until: (acknowledged) => acknowledged >= count,
  });

/** After the load: every event applied exactly once, equal to a rebuild, every acknowledged write kept. */
async function audit(scenario: FaultScenario, service: ObservedService, ledger: LoadLedger): Promise<Audit> {
  const db = new Client({ connectionString: scenario.databaseUrl });
  await db.connect();
  try {
    const notCaughtUp = await waitUntilCaughtUp(db, CATCH_UP_TIMEOUT_MS).then(
      () => undefined,
      (error: unknown) => String(error),
    );
    return {
      notCaughtUp,
      appliedEventCounts: await appliedEventCounts(db),
      storedEventCounts: await storedEventCounts(db, eventTypeCountsProjection.eventTypes),
      identity: await identityTotals(db),
      differencesFromRebuild: await differencesFromFreshRebuild(
        scenario.databaseUrl,
        scenario.scratchDatabaseUrl,
      ),
      brokenPromises: await brokenPromises(db, ledger),
      // Last: logging in appends events of its own.
      accountsThatCannotLogIn: await accountsThatCannotLogIn(service.url, ledger.registered),
    };
  } finally {
    await db.end();
  }
}
