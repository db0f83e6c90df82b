/**
 * How fast verify-ledger runs (not part of the test suite; the benchmark has the 1M-event figure):
 *   npx tsx tests/audit/ledgerVerifySpeed.ts [events]   (default 200000)
 * Seeds `events` events straight into the events table of a throw-away embedded PostgreSQL (brain
 * and user shaped payloads, a few thousand events per transaction), chains them with the ledger
 * projection alone, then times verifyLedger over them four times each way, the order rotated: the
 * walk (every event through store.readAll: the baseline), the links checked from the tables in this
 * thread, and in two worker threads.
 */
import { verifyLedger } from '#services/projector/verifyLedger';
import { catchUpLedger, withSeededLedgerDatabase } from './ledgerSeed';

const WAYS = [
  { name: 'walk (store.readAll)', direct: undefined },
  { name: 'direct, this thread', direct: { workers: 1 } },
  { name: 'direct, 2 workers', direct: { workers: 2 } },
] as const;

async function main(): Promise<void> {
  const events = Number(process.argv[2] ?? 200_000);
  await withSeededLedgerDatabase(events, async ({ url, store, pool }) => {
    const started = performance.now();
    const chained = await catchUpLedger({ store, pool });
    const chainSeconds = (performance.now() - started) / 1000;
    console.log(
      `chained ${chained} events in ${chainSeconds.toFixed(1)} s: ${Math.round(chained / chainSeconds)} events/s`,
    );
    for (let run = 1; run <= 4; run++) {
      for (let i = 0; i < WAYS.length; i++) {
        const way = WAYS[(i + run) % WAYS.length]!;
        const cpu = process.cpuUsage();
        const begun = performance.now();
        const result = await verifyLedger({
          store,
          pool,
          ...(way.direct ? { direct: { connectionString: url, ...way.direct, minEvents: 0 } } : {}),
        });
        const seconds = (performance.now() - begun) / 1000;
        const { user, system } = process.cpuUsage(cpu);
        console.log(
          `run ${run}: ${way.name}: ${result.eventsChecked} events in ${seconds.toFixed(2)} s: ${Math.round(result.eventsChecked / seconds)} events/s, ` +
            `${((user + system) / result.eventsChecked).toFixed(1)} µs CPU/event of this process (ok: ${result.ok})`,
        );
      }
    }
  });
}

void main();
