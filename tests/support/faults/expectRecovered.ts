import type { FaultRunReport } from './faultRun';
import { READ_YOUR_WRITES_TIMEOUT_MS, RECOVERY_BOUND_MS } from './faultRun';
import type { HealthSample } from './healthWatch';

const SHOWN = 10;

/**
 * The promises every fault must keep, checked together so one run shows every broken one: the
 * service stayed up and never answered 500; /health/live/ stayed 200; /health/ was 200 again within
 * 20 s; a write right after recovery was readable at once without waiting the read-your-writes
 * timeout; the load went on; no acknowledged write was lost; the read models hold every event
 * exactly once and equal a fresh rebuild. `context` is only shown when something fails.
 */
export function expectRecovered(report: FaultRunReport, context: string): void {
  const { ledger, audit } = report;
  const statuses = Object.fromEntries(ledger.statuses);
  const verdict = {
    context: `${context}; load answers ${JSON.stringify(statuses)}, acknowledged ${ledger.acknowledged}`,
    serviceExit: report.serviceExit,
    unexpectedLoadAnswers: ledger.unexpected.slice(0, SHOWN),
    serverErrors: serverErrors(report).slice(0, SHOWN),
    notLive: tally(report.liveness.filter((s) => s.status !== 200)),
    livenessPolled: report.liveness.length > 0,
    healthyWithin20s: report.healthyAgain
      ? true
      : `no 200 from /health/ within ${RECOVERY_BOUND_MS} ms; last: ${describeSamples(report.health.slice(-3))}`,
    writesAfterRecovery: report.afterRecovery.map((p) => ({
      write: p.write.status,
      nextReadShowsIt: (p.read.body as { bio?: unknown } | undefined)?.bio === p.bio,
      warnings: p.writeWarnings,
      waitedOutTheTimeout: p.write.elapsedMs >= READ_YOUR_WRITES_TIMEOUT_MS,
    })),
    loadWentOn: report.acknowledgedAfterRecovery > 0,
    readModelsCaughtUp: audit.notCaughtUp ?? true,
    appliedEventCounts: audit.appliedEventCounts,
    identityReadModel: audit.identity.readModel,
    differencesFromRebuild: audit.differencesFromRebuild,
    brokenPromises: audit.brokenPromises.slice(0, SHOWN),
    accountsThatCannotLogIn: audit.accountsThatCannotLogIn.slice(0, SHOWN),
  };
  expect(verdict).toEqual({
    context: verdict.context,
    serviceExit: null,
    unexpectedLoadAnswers: [],
    serverErrors: [],
    notLive: [],
    livenessPolled: true,
    healthyWithin20s: true,
    writesAfterRecovery: report.afterRecovery.map(() => ({
      write: 200,
      nextReadShowsIt: true,
      warnings: [],
      waitedOutTheTimeout: false,
    })),
    loadWentOn: true,
    readModelsCaughtUp: true,
    // a skipped event shows as a count too low, one applied twice as too high
    appliedEventCounts: audit.storedEventCounts,
    identityReadModel: audit.identity.events,
    differencesFromRebuild: [],
    brokenPromises: [],
    accountsThatCannotLogIn: [],
  });
}

/** Any 5xx but 503 (the honest "try later") from the load, the health endpoints or the probe. */
function serverErrors(report: FaultRunReport): string[] {
  const isServerError = (status: number | 'unreachable'): boolean =>
    typeof status === 'number' && status >= 500 && status !== 503;
  const fromLoad = [...report.ledger.statuses]
    .filter(([status]) => isServerError(status))
    .map(([status, n]) => `load: ${n} × ${status}`);
  const fromHealth = [...report.health, ...report.liveness]
    .filter((s) => isServerError(s.status))
    .map((s) => `${s.path} → ${describeSamples([s])}`);
  const fromProbe = [...report.duringFault, ...report.afterRecovery.flatMap((p) => [p.write, p.read])]
    .filter((a) => isServerError(a.status))
    .map((a) => `probe ${a.requestId} → ${a.status} ${JSON.stringify(a.body)}`);
  return [...fromLoad, ...fromHealth, ...fromProbe];
}

export function describeSamples(samples: readonly HealthSample[]): string {
  return samples.map((s) => `${s.status} ${JSON.stringify(s.body)}`).join(' | ');
}

/** "12 × 404 {...}": one line per distinct answer, however many polls got it. */
function tally(samples: readonly HealthSample[]): string[] {
  const counts = new Map<string, number>();
  for (const s of samples) {
    const key = describeSamples([s]);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([answer, n]) => `${n} × ${answer}`);
}
