import { abortableSleep } from '#tests/support/faults/abortableSleep';
import { describeSamples, expectRecovered } from '#tests/support/faults/expectRecovered';
import { runFaultScenario } from '#tests/support/faults/faultRun';
import { startPrivatePostgres, type PrivatePostgres } from '#tests/support/privatePostgres';
import { createTestDatabase } from '#tests/support/testPostgres';

/**
 * The operator's incident: under write load, the service's PostgreSQL stops for 10 s and starts
 * again. Meanwhile the service answers 503 with Retry-After (never 500) and says so on /health/;
 * afterwards it heals by itself. The cluster is the test's own: the run's shared one never stops.
 */
const OUTAGE_MS = 10_000;

let postgres: PrivatePostgres | undefined;

afterAll(async () => {
  await postgres?.close();
});

test('PostgreSQL stopped for 10 s and started again under write load', async () => {
  const pg = (postgres = await startPrivatePostgres());
  let downAt = 0;
  let upAt = 0;
  const report = await runFaultScenario({
    databaseUrl: await createTestDatabase('faults', pg.url),
    scratchDatabaseUrl: await createTestDatabase('rebuild', pg.url),
    async inject() {
      await pg.stop();
      downAt = Date.now();
      await abortableSleep(OUTAGE_MS);
      await pg.start();
      upAt = Date.now();
    },
  });

  expectRecovered(report, `down ${upAt - downAt} ms`);
  // The truth while it lasted: /health/ said 503, and writes were refused with 503 + Retry-After.
  const healthyAgainAt = report.healthyAgain?.at ?? Infinity;
  const healthDuringOutage = report.health.filter((s) => s.at > downAt && s.at < healthyAgainAt);
  const refusedWrites = report.duringFault.filter((a) => a.status === 503);
  expect({
    health: describeSamples(healthDuringOutage),
    healthSaid503: healthDuringOutage.some((s) => s.status === 503),
    writesRefusedWith503: refusedWrites.length > 0,
    refusalsWithRetryAfter: refusedWrites.every((a) => a.retryAfter !== null),
    probeAnswers: report.duringFault.map((a) => a.status).join(' '),
  }).toEqual({
    health: describeSamples(healthDuringOutage),
    healthSaid503: true,
    writesRefusedWith503: true,
    refusalsWithRetryAfter: true,
    probeAnswers: report.duringFault.map((a) => a.status).join(' '),
  });
}, 150_000);
