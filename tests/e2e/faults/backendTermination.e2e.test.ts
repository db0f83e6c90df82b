import { BackendTerminator } from '#tests/support/faults/backendTerminator';
import { expectRecovered } from '#tests/support/faults/expectRecovered';
import { runFaultScenario } from '#tests/support/faults/faultRun';
import { createTestDatabase, serverUrl } from '#tests/support/testPostgres';

/**
 * Under write load, every connection the service holds to its database (pools, the projector's
 * leader connection, LISTEN connections) is terminated by the server at random moments, as a
 * failover or a restarted pooler would. The service must heal each time without losing or
 * repeating anything.
 */
const ROUNDS = 6;

let terminator: BackendTerminator | undefined;

afterAll(async () => {
  await terminator?.close();
});

test('every backend connection terminated at random moments under write load', async () => {
  const databaseUrl = await createTestDatabase('faults');
  const killer = (terminator = await BackendTerminator.connect(serverUrl(), databaseUrl));
  let terminated: number[] = [];
  const report = await runFaultScenario({
    databaseUrl,
    scratchDatabaseUrl: await createTestDatabase('rebuild'),
    async inject() {
      terminated = await killer.terminateAtRandomMoments('all', {
        rounds: ROUNDS,
        minDelayMs: 200,
        maxDelayMs: 800,
        // The service reconnects on its next query, which a writer waiting for the read side (the
        // projector in its backoff) may not send for a while: cut only once it holds connections
        // again, so every round hits a working service (a round that found none failed one run).
        beforeRound: async () => {
          await killer.waitForCount('all', 1, 15_000);
        },
      });
    },
  });

  expectRecovered(report, `connections terminated per round: ${terminated.join(', ')}`);
  // Each round found connections to cut: the fault really hit a working service every time.
  expect(terminated).toEqual(terminated.map((n) => Math.max(n, 1)));
}, 150_000);
