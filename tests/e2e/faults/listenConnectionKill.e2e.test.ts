import { BackendTerminator } from '#tests/support/faults/backendTerminator';
import { expectRecovered } from '#tests/support/faults/expectRecovered';
import { runFaultScenario } from '#tests/support/faults/faultRun';
import { createTestDatabase, serverUrl } from '#tests/support/testPostgres';

/**
 * Under write load, only the service's LISTEN connections (the event store subscription's wake-up
 * and the projection progress listener) are terminated, several times. They carry no queries, so
 * nothing fails loudly: a listener that never comes back would only show as writes that wait or
 * reads that lag. Each time they must reconnect, and nothing may be lost or applied twice.
 */
const ROUNDS = 3;
const LISTENERS_BACK_TIMEOUT_MS = 20_000;

let terminator: BackendTerminator | undefined;

afterAll(async () => {
  await terminator?.close();
});

test('the LISTEN connections killed under write load', async () => {
  const databaseUrl = await createTestDatabase('faults');
  const killer = (terminator = await BackendTerminator.connect(serverUrl(), databaseUrl));
  let listeners = 0;
  let terminated: number[] = [];
  const cameBack: boolean[] = [];
  const report = await runFaultScenario({
    databaseUrl,
    scratchDatabaseUrl: await createTestDatabase('rebuild'),
    async inject() {
      listeners = await killer.count('listen');
      // Before each round, and once more at the end: all of them are listening again.
      const waitForListeners = async (): Promise<void> => {
        cameBack.push(await killer.waitForCount('listen', listeners, LISTENERS_BACK_TIMEOUT_MS));
      };
      terminated = await killer.terminateAtRandomMoments('listen', {
        rounds: ROUNDS,
        minDelayMs: 200,
        maxDelayMs: 800,
        beforeRound: waitForListeners,
      });
      await waitForListeners();
    },
  });

  expectRecovered(report, `${listeners} LISTEN connections; terminated per round: ${terminated.join(', ')}`);
  expect({ listeners: listeners > 0, terminated, cameBack }).toEqual({
    listeners: true,
    terminated: terminated.map(() => listeners),
    cameBack: cameBack.map(() => true),
  });
}, 150_000);
