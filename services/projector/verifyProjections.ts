import type { Pool } from 'pg';
import { loadConfig } from '#shared/config/config';
import type { GlobalPosition } from '#shared/eventStore/eventStore';
import { formatPosition } from '#shared/eventStore/eventStore';
import { connectToRunningDatabase } from '#shared/platform/connectToRunningDatabase';
import { formatDifference } from '#shared/projections/verify/compareReadModels';
import { verifyReadModels } from '#shared/projections/verify/verifyReadModels';
import { allProjections } from './projections/allProjections';

/**
 * `npm run verify-projections`: rebuilds every read model (the PostgreSQL search tables included)
 * from the events into a private shadow schema of the service's database, and compares each table
 * with the live one row by row, at the position the live read models stood at when it began
 * (verifyReadModels). The service keeps serving meanwhile: no leader lock, no pause, nothing live
 * written. Prints each difference and a summary on stdout, progress on stderr; exits 1 on any
 * difference, 2 when it could not verify (or found nothing to verify), 130 when interrupted. The shadow schema is dropped at
 * the end, on failure and on Ctrl-C too (one left by a run killed outright is dropped by the next).
 */
async function main(): Promise<number> {
  const config = loadConfig(process.env);
  const db = await connectToRunningDatabase(config);
  const aborted = new AbortController();
  const interrupt = (signal: NodeJS.Signals): void => {
    if (aborted.signal.aborted) process.exit(130); // twice: at once (the next run drops the schema)
    process.stderr.write(`\n${signal}: stopping, dropping the shadow schema (again to quit at once)\n`);
    aborted.abort(new Error(`interrupted (${signal})`));
  };
  process.on('SIGINT', interrupt);
  process.on('SIGTERM', interrupt);
  try {
    process.stderr.write(`verifying the read models of ${db.description}\n`);
    const out = (line: string): boolean => process.stdout.write(`${line}\n`);
    const report = await verifyReadModels({
      store: db.store,
      live: db.pool,
      projections: allProjections,
      signal: aborted.signal,
      countEvents: config.eventStoreConnectionString ? undefined : (upTo) => countEvents(db.pool, upTo),
      onProgress: (applied, total) =>
        process.stderr.write(
          `\rrebuilding: ${applied}${total === undefined ? '' : `/${total}`} events applied`,
        ),
      onDifference: (difference) => out(formatDifference(difference)),
    });
    process.stderr.write('\n');
    for (const p of report.projections)
      if (p.position === undefined) out(`skipped: ${p.name} v${p.version} ${p.note ?? ''}`);
      else if (p.note) out(`note: ${p.name} v${p.version} ${p.note}`);
    if (config.searchBackend === 'elasticsearch')
      out(
        'skipped: elasticsearch index not compared (it is written outside PostgreSQL transactions, so it cannot be read at the snapshot the read models are compared in; the PostgreSQL search tables it mirrors were compared)',
      );
    const compared = report.projections.filter((p) => p.position !== undefined);
    const at = compared[0]?.position;
    const verdict =
      report.differences === 0 ? 'equal to a rebuild' : `${report.differences} difference(s) from a rebuild`;
    out(
      `verify-projections: ${verdict}: ${report.tables} table(s) of ${compared.length} read model(s)` +
        `${at ? ` at position ${formatPosition(at)}` : ''}, ${report.liveRows} live row(s), ` +
        `${report.events} event(s) rebuilt in ${report.buildSeconds.toFixed(2)} s, compared in ${report.compareSeconds.toFixed(2)} s`,
    );
    if (compared.length === 0) {
      process.stderr.write(
        'verify-projections: no read model of this code is installed there: nothing verified\n',
      );
      return 2;
    }
    return report.differences === 0 ? 0 : 1;
  } catch (error) {
    if (aborted.signal.aborted) {
      process.stderr.write('verify-projections interrupted; the shadow schema was dropped\n');
      return 130;
    }
    throw error;
  } finally {
    await db.close();
  }
}

/** Events in the PostgreSQL store up to `upTo` (for the progress line); undefined if it cannot tell. */
async function countEvents(pool: Pool, upTo: GlobalPosition): Promise<number | undefined> {
  try {
    const { rows } = await pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM event_store.events
        WHERE (transaction_id, global_position) <= ($1::xid8, $2::bigint)`,
      [upTo.commit.toString(), upTo.prepare.toString()],
    );
    return Number(rows[0]?.n ?? 0);
  } catch {
    return undefined;
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `verify-projections failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(2);
  },
);
