import { parentPort, workerData } from 'node:worker_threads';
import pg from 'pg';
import { checkLinksByCopy } from './ledgerCopyLinks';

/**
 * Worker-thread entry of the parallel verify-ledger (parallelLedgerCheck.ts): checks the links of one
 * segment of the ledger straight from the tables (ledgerCopyLinks.ts; only for a store read without
 * upcasting) over its own two connections, and posts its progress after each page and its outcome once.
 */
export interface SegmentWorkerData {
  readonly connectionString: string;
  /** The event store's schema (default event_store). */
  readonly schema: string | undefined;
  readonly fromSeq: number;
  readonly toSeq: number;
  readonly previousHash: Uint8Array;
  /** Positions as decimal strings (bigint does not cross every structured clone the same way). */
  readonly startPosition: readonly [string, string];
  readonly storeHead: readonly [string, string];
  readonly pageSize: number;
}

export type SegmentMessage =
  | { readonly kind: 'page'; readonly checked: number }
  | { readonly kind: 'done'; readonly firstBroken: number | undefined; readonly checked: number }
  | { readonly kind: 'failed'; readonly message: string };

export type SegmentCommand = { readonly kind: 'stop' };

const data = workerData as SegmentWorkerData;
const port = parentPort!;
let stopped = false;
port.on('message', (command: SegmentCommand) => {
  if (command.kind === 'stop') stopped = true;
});

const position = ([commit, prepare]: readonly [string, string]) => ({
  commit: BigInt(commit),
  prepare: BigInt(prepare),
});

async function run(): Promise<void> {
  // Events and ledger rows in one database (the PostgreSQL adapter): one connection for each.
  const pool = new pg.Pool({ connectionString: data.connectionString, max: 2 });
  pool.on('error', () => undefined);
  try {
    const outcome = await checkLinksByCopy(
      { events: pool, ledger: pool, schema: data.schema },
      {
        fromSeq: data.fromSeq,
        toSeq: data.toSeq,
        previousHash: Buffer.from(data.previousHash),
        startPosition: position(data.startPosition),
        storeHead: position(data.storeHead),
        pageSize: data.pageSize,
      },
      (checked) => port.postMessage({ kind: 'page', checked } satisfies SegmentMessage),
      () => stopped,
    );
    port.postMessage({ kind: 'done', ...outcome } satisfies SegmentMessage);
  } catch (error) {
    port.postMessage({
      kind: 'failed',
      message: error instanceof Error ? error.message : String(error),
    } satisfies SegmentMessage);
  } finally {
    await pool.end().catch(() => undefined);
    port.close();
  }
}

void run();
