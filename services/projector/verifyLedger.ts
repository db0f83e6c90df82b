import { loadConfig } from '#shared/config/config';
import { connectToRunningDatabase } from '#shared/platform/connectToRunningDatabase';
import { recordLedgerVerification } from '#shared/audit/ledgerVerifications';
import { type LedgerVerification, verifyLedger } from './ledgerVerification';

export {
  verifyLedger,
  type LedgerFault,
  type LedgerFaultKind,
  type LedgerVerification,
  type VerifyLedgerOptions,
} from './ledgerVerification';

const USAGE = `usage: npm run verify-ledger [-- [--json] [--from-seq N]]

Recomputes the ledger's hash chain from the events and compares it with the ledger (the ledger
read model). Exit 0 when intact, 1 naming the first position where an event was altered, removed or
inserted, 2 when it could not run. Reaches the database as the service does: DATABASE_URL, or the
running all-in-one's embedded PostgreSQL found through DATA_DIR (default ./data); it starts nothing.
  --json         one JSON object on stdout instead of the line of text
  --from-seq N   verify from seq N on, starting from the ledger's hash at N - 1 (which an earlier
                 full run proved): a routine run over what was chained since
`;

/**
 * `npm run verify-ledger`: verifies the ledger (ledgerVerification.ts), prints the outcome, records
 * the run in audit.ledger_verifications (the ledger metrics read it) and exits 0 or 1.
 */
async function main(args: readonly string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) return (void process.stdout.write(USAGE), 0);
  const options = parseArguments(args);
  if (typeof options === 'string') {
    process.stderr.write(`${options}\n${USAGE}`);
    return 2;
  }
  const { json, fromSeq } = options;
  const config = loadConfig(process.env);
  const db = await connectToRunningDatabase(config);
  try {
    const showProgress = process.stderr.isTTY && !json;
    const result = await verifyLedger({
      store: db.store,
      pool: db.pool,
      fromSeq,
      // The links checked straight from the PostgreSQL tables (in worker threads where there are cores).
      direct: config.eventStoreConnectionString ? undefined : { connectionString: db.databaseUrl },
      onProgress: showProgress
        ? (done, total) => process.stderr.write(`\rverifying ${done}/${total} events`)
        : undefined,
    });
    if (showProgress) process.stderr.write('\n');
    await recordLedgerVerification(db.pool, {
      startedAt: result.startedAt,
      finishedAt: result.finishedAt,
      ok: result.ok,
      eventsChecked: result.eventsChecked,
      firstBadPosition: result.fault?.position ?? null,
      message: result.message,
    }).catch((error: unknown) =>
      process.stderr.write(`warning: the run could not be recorded: ${String(error)}\n`),
    );
    process.stdout.write(`${json ? JSON.stringify(jsonOf(result)) : result.message}\n`);
    return result.ok ? 0 : 1;
  } finally {
    await db.close();
  }
}

/** The options, or what is wrong with the arguments. */
function parseArguments(args: readonly string[]): { json: boolean; fromSeq: number } | string {
  let json = false;
  let fromSeq = 1;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--json') json = true;
    else if (arg === '--from-seq' || arg.startsWith('--from-seq=')) {
      const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : args[++i];
      if (value === undefined || !/^[1-9]\d{0,15}$/.test(value))
        return `--from-seq takes a seq (1, 2, 3...), got "${value ?? ''}"`;
      fromSeq = Number(value);
    } else return `unknown argument: ${arg}`;
  }
  return { json, fromSeq };
}

function jsonOf(result: LedgerVerification): Record<string, unknown> {
  const seconds = (result.finishedAt.getTime() - result.startedAt.getTime()) / 1000;
  return {
    ok: result.ok,
    from_seq: result.fromSeq,
    events_checked: result.eventsChecked,
    newer_events: result.newerEvents,
    head: {
      position: result.head.position,
      count: result.head.count,
      hash: result.head.hash.toString('hex'),
    },
    fault: result.fault
      ? {
          kind: result.fault.kind,
          seq: result.fault.seq,
          position: result.fault.position,
          event_id: result.fault.eventId,
        }
      : null,
    message: result.message,
    started_at: result.startedAt.toISOString(),
    seconds,
  };
}

// Run as a script only: tests and the benchmark import verifyLedger from here.
if (require.main === module)
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(
        `verify-ledger failed: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      process.exitCode = 2;
    },
  );
