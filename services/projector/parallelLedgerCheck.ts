import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { LinkSegment } from './ledgerLinks';
import type { SegmentCommand, SegmentMessage, SegmentWorkerData } from './ledgerSegmentWorker';

/**
 * How verify-ledger reads the PostgreSQL tables directly (ledgerCopyLinks.ts): only for the PostgreSQL
 * event store read without upcasting (no upcaster registered).
 */
export interface DirectVerification {
  /** The database of the event store and the ledger (the PostgreSQL adapter: one database). */
  readonly connectionString: string;
  /** The event store's schema (default event_store). */
  readonly schema?: string;
  /**
   * Segments checked at once, one worker thread each; one: the whole ledger checked in the calling
   * thread. Default: one thread per two cores available (each keeps a PostgreSQL backend about half
   * as busy as itself), at least two where there are two cores (one thread alone leaves half of the
   * second core idle: at a million events, 113k events/s in one thread against 119k in two, and the
   * two steadier), at most 8.
   */
  readonly workers?: number;
  /** Fewer ledger rows than this to verify: the walk alone (default 10,000). */
  readonly minEvents?: number;
}

export const DEFAULT_MIN_DIRECT_EVENTS = 10_000;
export const MAX_VERIFY_WORKERS = 8;

export function verifyWorkers(direct: DirectVerification): number {
  const cores = availableParallelism();
  const workers = direct.workers ?? (cores >= 2 ? Math.max(2, Math.floor(cores / 2)) : 1);
  return Math.max(1, Math.min(workers, MAX_VERIFY_WORKERS));
}

/** .ts under jest and tsx (the worker then needs tsx to load it), .js from the build. */
const OWN_EXTENSION = path.extname(__filename);
const WORKER_FILE = path.join(__dirname, `ledgerSegmentWorker${OWN_EXTENSION}`);
const WORKER_ENTRY =
  OWN_EXTENSION === '.ts' ? `require('tsx/cjs'); require(${JSON.stringify(WORKER_FILE)});` : WORKER_FILE;

const positionText = (p: LinkSegment['startPosition']): [string, string] => [
  p.commit.toString(),
  p.prepare.toString(),
];

/**
 * Checks the links of every segment at once, one worker thread each (ledgerLinks.ts), and answers the
 * first seq, in seq order, whose link does not hold, or undefined when all of them do. Once a segment
 * has found a broken link, the segments after it are stopped: their answer cannot come first.
 * `onProgress` hears the links checked so far over all segments. A worker that fails makes it throw.
 */
export async function firstBrokenLink(
  direct: DirectVerification,
  segments: readonly LinkSegment[],
  onProgress?: (checked: number) => void,
): Promise<number | undefined> {
  const checkedBySegment = segments.map(() => 0);
  const workers: Worker[] = [];
  const report = (index: number, checked: number): void => {
    checkedBySegment[index] = checked;
    onProgress?.(checkedBySegment.reduce((sum, n) => sum + n, 0));
  };
  const stopAfter = (seq: number): void => {
    segments.forEach((segment, index) => {
      if (segment.fromSeq > seq) workers[index]?.postMessage({ kind: 'stop' } satisfies SegmentCommand);
    });
  };
  const outcomes = segments.map(
    (segment, index) =>
      new Promise<number | undefined>((resolve, reject) => {
        const data: SegmentWorkerData = {
          connectionString: direct.connectionString,
          schema: direct.schema,
          fromSeq: segment.fromSeq,
          toSeq: segment.toSeq,
          previousHash: new Uint8Array(segment.previousHash),
          startPosition: positionText(segment.startPosition),
          storeHead: positionText(segment.storeHead),
          pageSize: segment.pageSize,
        };
        const worker = new Worker(WORKER_ENTRY, { eval: OWN_EXTENSION === '.ts', workerData: data });
        workers[index] = worker;
        let settled = false;
        worker.on('message', (message: SegmentMessage) => {
          if (message.kind === 'page') report(index, message.checked);
          else if (message.kind === 'done') {
            settled = true;
            report(index, message.checked);
            if (message.firstBroken !== undefined) stopAfter(message.firstBroken);
            resolve(message.firstBroken);
          } else {
            settled = true;
            reject(new Error(`verifying seq ${segment.fromSeq} to ${segment.toSeq}: ${message.message}`));
          }
        });
        worker.on('error', (error) => {
          settled = true;
          reject(error);
        });
        worker.on('exit', (code) => {
          if (!settled)
            reject(
              new Error(`the worker verifying seq ${segment.fromSeq} to ${segment.toSeq} exited (${code})`),
            );
        });
      }),
  );
  try {
    const found = await Promise.all(outcomes);
    const broken = found.filter((seq): seq is number => seq !== undefined);
    return broken.length > 0 ? Math.min(...broken) : undefined;
  } finally {
    // A failure elsewhere leaves the other workers running: end them (a finished one is already gone).
    await Promise.all(workers.map((worker) => worker.terminate().catch(() => undefined)));
  }
}
