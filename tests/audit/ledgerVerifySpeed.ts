/**
 * How fast verify-ledger runs (not part of the test suite; the benchmark has the 1M-event figure):
 *   npx tsx tests/audit/ledgerVerifySpeed.ts [events]   (default 200000)
 * Seeds `events` events straight into the events table of a throw-away embedded PostgreSQL (brain
 * and user shaped payloads, a few thousand events per transaction), chains them with the audit_log
 * projection alone, then times verifyLedger over them three times, each beside a baseline: reading
 * the same events through store.readAll alone.
 */
import { verifyLedger } from '#services/projector/verifyLedger';
import { START } from '#shared/eventStore/eventStore';
import { readEventTexts } from '#services/projector/ledgerEventTexts';
import { catchUpLedger, withSeededLedgerDatabase } from './ledgerSeed';

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
      // Baseline in the same run: reading every event through store.readAll in the same pages, no hashing.
      let started2 = performance.now();
      let read = 0;
      for (let page = await store.readAll({ maxCount: 10_000 }); page.length > 0;) {
        read += page.length;
        page = await store.readAll({ after: page[page.length - 1]!.position, maxCount: 10_000 });
      }
      const readSeconds = (performance.now() - started2) / 1000;
      // What a worker reads: the events as canonical texts straight from the table, all in one thread.
      started2 = performance.now();
      const storeHead = await store.headPosition();
      let texts = 0;
      for (let after = START; ;) {
        const page = await readEventTexts(store.pool, undefined, after, storeHead, 10_000);
        texts += page.items.length;
        const last = page.items[page.items.length - 1];
        if (page.done || !last) break;
        after = { commit: BigInt(last.commit), prepare: BigInt(last.prepare) };
      }
      console.log(
        `run ${run}: readEventTexts alone (one thread): ${Math.round(texts / ((performance.now() - started2) / 1000))} events/s`,
      );
      for (const parallel of run % 2 === 1 ? [false, true] : [true, false]) {
        const cpu = process.cpuUsage();
        started2 = performance.now();
        const result = await verifyLedger({
          store,
          pool,
          ...(parallel ? { parallel: { connectionString: url } } : {}),
        });
        const seconds = (performance.now() - started2) / 1000;
        const { user, system } = process.cpuUsage(cpu);
        console.log(
          `run ${run}: verify-ledger ${parallel ? 'parallel' : 'one thread'} ${result.eventsChecked} events in ${seconds.toFixed(2)} s: ${Math.round(result.eventsChecked / seconds)} events/s, ` +
            `${((user + system) / result.eventsChecked).toFixed(1)} µs CPU/event of this process (ok: ${result.ok}); ` +
            `baseline readAll alone: ${Math.round(read / readSeconds)} events/s`,
        );
      }
    }
  });
}

void main();
