/**
 * How fast the ledger catches up, and where its CPU goes (not part of the test suite; the benchmark
 * has the 1M-event figure):
 *   npx tsx tests/audit/ledgerCatchUpSpeed.ts [events]   (default 200000)
 * Seeds `events` events straight into the events table of a throw-away embedded PostgreSQL, then
 * chains them with the ledger projection alone from zero, three times (dropping the projection's
 * tables between), each beside a baseline: reading the same events through store.readAll alone.
 * Prints events/s and the CPU per event of this process and of PostgreSQL (its processes' times from
 * /proc): on a loaded machine the CPU per event still says what a change saved.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { catchUpLedger, withSeededLedgerDatabase } from './ledgerSeed';

const TICKS_PER_SECOND = 100;

/** CPU seconds of the postmaster running on `dataDir` and its children (running and ended). */
function postgresCpuSeconds(dataDir: string): number {
  const stats = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        return {
          pid: Number(pid),
          ppid: Number(fields[1]),
          own: Number(fields[11]) + Number(fields[12]),
          children: Number(fields[13]) + Number(fields[14]),
          cmdline,
        };
      } catch {
        return undefined;
      }
    })
    .filter((s) => s !== undefined);
  const master = stats.find((s) => s.cmdline.includes(dataDir) && s.cmdline.includes('postgres'));
  if (!master) return 0;
  let ticks = master.own + master.children;
  for (const s of stats) if (s.ppid === master.pid) ticks += s.own;
  return ticks / TICKS_PER_SECOND;
}

async function main(): Promise<void> {
  const events = Number(process.argv[2] ?? 200_000);
  await withSeededLedgerDatabase(events, async ({ dataDir, store, pool }) => {
    let started: number;
    for (let run = 1; run <= 3; run++) {
      let cpu = process.cpuUsage();
      let pgCpu = postgresCpuSeconds(dataDir);
      started = performance.now();
      let read = 0;
      for (let page = await store.readAll({ maxCount: 2000 }); page.length > 0;) {
        read += page.length;
        page = await store.readAll({ after: page[page.length - 1]!.position, maxCount: 2000 });
      }
      const perEvent = (seconds: number): string => ((seconds * 1e6) / events).toFixed(1);
      let { user, system } = process.cpuUsage(cpu);
      console.log(
        `run ${run}: readAll alone ${Math.round(read / ((performance.now() - started) / 1000))} events/s, ` +
          `CPU per event: node ${perEvent((user + system) / 1e6)} µs, PostgreSQL ${perEvent(postgresCpuSeconds(dataDir) - pgCpu)} µs`,
      );
      // From zero: the projection's tables and checkpoint gone (none the first time).
      await pool.query('DROP TABLE IF EXISTS rm.ledger_v1 CASCADE');
      await pool
        .query(`DELETE FROM rm.projection_checkpoints WHERE projection = 'ledger'`)
        .catch(() => undefined);
      cpu = process.cpuUsage();
      pgCpu = postgresCpuSeconds(dataDir);
      started = performance.now();
      const chained = await catchUpLedger({ store, pool });
      const seconds = (performance.now() - started) / 1000;
      ({ user, system } = process.cpuUsage(cpu));
      console.log(
        `run ${run}: catch-up ${chained} events in ${seconds.toFixed(1)} s: ${Math.round(chained / seconds)} events/s, ` +
          `CPU per event: node ${perEvent((user + system) / 1e6)} µs, PostgreSQL ${perEvent(postgresCpuSeconds(dataDir) - pgCpu)} µs`,
      );
    }
  });
}

void main();
