import { parentPort, workerData } from 'node:worker_threads';
import pg from 'pg';
import { createPostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import { upcastingEventStore } from '#shared/eventStore/upcastingEventStore';
import { UPCASTERS } from '#shared/domain/upcasters';
import { EVENT_TEXTS_CONNECTION_OPTIONS, readEventTexts } from './ledgerEventTexts';
import { type EventTextSource, checkLinks, eventTextsOf } from './ledgerLinks';

/**
 * Worker-thread entry of the parallel verify-ledger (parallelLedgerCheck.ts): checks the links of one
 * segment of the ledger (ledgerLinks.ts) over its own two connections, the store read as the service
 * reads it (upcast), and posts its progress after each page and its outcome once.
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
  const raw = createPostgresEventStore({
    connectionString: data.connectionString,
    poolSize: 2,
    ...(data.schema ? { schema: data.schema } : {}),
  });
  const store = upcastingEventStore(raw);
  // Its times printed as readEventTexts reads them.
  const pool = new pg.Pool({
    connectionString: data.connectionString,
    max: 2,
    options: EVENT_TEXTS_CONNECTION_OPTIONS,
  });
  pool.on('error', () => undefined);
  // Straight from the table, unless an upcaster could change what the store's read gives.
  const events: EventTextSource =
    UPCASTERS.size === 0
      ? (after, upTo, pageSize) => readEventTexts(pool, data.schema, after, upTo, pageSize)
      : eventTextsOf(store);
  try {
    const outcome = await checkLinks(
      events,
      pool,
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
    await store.close().catch(() => undefined);
    await pool.end().catch(() => undefined);
    port.close();
  }
}

void run();
