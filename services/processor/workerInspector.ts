import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { BlobSettings } from './blobSettings';
import {
  type InspectionOutcome,
  type Inspector,
  type ProcessingJob,
  WORKER_READY,
  type WorkerMessage,
} from './inspection';
import type { InspectionWorkerData } from './inspectionWorker';

export interface WorkerInspectorOptions {
  readonly blobs: BlobSettings;
  /** Absolute path of a module exporting `inspectUpload` (default: shared/formats/inspectUpload). */
  readonly inspectorModule?: string;
  /**
   * How long the inspection of this upload may run before its worker is terminated, counted from
   * when the worker has loaded the inspector (a new worker's start is not the file's doing).
   */
  readonly timeLimitMs: (job: ProcessingJob) => number;
  /** A new worker that has not loaded the inspector by then is ended as crashed (default 60 s). */
  readonly startupMs?: number;
  /** Heap limit of each worker. */
  readonly memoryMb: number;
  /** The nice value of the worker threads (0 to 19): how far requests go first. */
  readonly nice: number;
  /** A worker idle this long is ended (default 30 s). */
  readonly idleMs?: number;
  /** A worker is replaced after this many inspections (default 100). */
  readonly jobsPerWorker?: number;
}

/** .ts under jest and tsx (the worker then needs tsx to load it), .js from the build. */
const OWN_EXTENSION = path.extname(__filename);
const WORKER_FILE = path.join(__dirname, `inspectionWorker${OWN_EXTENSION}`);
/** From TypeScript sources the worker registers tsx's require hook before loading its entry. */
const WORKER_ENTRY =
  OWN_EXTENSION === '.ts' ? `require('tsx/cjs'); require(${JSON.stringify(WORKER_FILE)});` : WORKER_FILE;
export const DEFAULT_INSPECTOR_MODULE = path.resolve(
  __dirname,
  `../../shared/formats/inspectUpload${OWN_EXTENSION}`,
);

const IDLE_MS = 30_000;
const STARTUP_MS = 60_000;
/**
 * A new worker loads the format readers (~0.1 s of CPU from the build) and then runs them unoptimised
 * until V8 has compiled them: at 100 inspections per worker that start-up was a third of the
 * processing CPU of small uploads (bic import of 1,000 small NIfTIs: the workers' CPU per upload
 * 8.4 ms with 100, 6.0 ms with 1,000; one run each). A leak would still be bounded by the heap limit
 * and the idle timeout.
 */
const JOBS_PER_WORKER = 1000;

/**
 * Inspects uploads in worker threads, never on the caller's event loop: each worker has a heap limit,
 * and one still inspecting at its upload's time limit (or when the processor stops) is terminated.
 * Workers are kept for the next upload (starting one, with the format readers, costs far more CPU than
 * inspecting a small file); a worker that crashed, timed out or was stopped is never reused, one is
 * replaced after `jobsPerWorker` inspections, and one idle for `idleMs` is ended, so an idle
 * processor holds no worker memory.
 */
export function workerInspector(options: WorkerInspectorOptions): Inspector {
  return new WorkerPool(options);
}

class WorkerPool implements Inspector {
  private readonly idle: PooledWorker[] = [];
  private readonly all = new Set<PooledWorker>();
  private closed = false;

  constructor(private readonly options: WorkerInspectorOptions) {}

  async inspect(job: ProcessingJob, signal: AbortSignal): Promise<InspectionOutcome> {
    if (signal.aborted || this.closed) return { kind: 'aborted' };
    const worker = this.idle.pop() ?? this.spawn();
    worker.take();
    const { outcome, reusable } = await worker.run(job, signal, {
      limitMs: this.options.timeLimitMs(job),
      startupMs: this.options.startupMs ?? STARTUP_MS,
    });
    if (reusable && !this.closed && worker.inspections < (this.options.jobsPerWorker ?? JOBS_PER_WORKER))
      this.park(worker);
    else void worker.end();
    return outcome;
  }

  /** Ends the idle workers now and every other one when its inspection ends; resolves when all are gone. */
  async close(): Promise<void> {
    this.closed = true;
    const busy = [...this.all].filter((worker) => !this.idle.includes(worker));
    await Promise.all([...this.idle.map((worker) => worker.end()), ...busy.map((worker) => worker.gone())]);
  }

  private spawn(): PooledWorker {
    const worker = new PooledWorker(this.options, () => this.forget(worker));
    this.all.add(worker);
    return worker;
  }

  private park(worker: PooledWorker): void {
    this.idle.push(worker);
    worker.rest(this.options.idleMs ?? IDLE_MS, () => {
      // Out of the idle list first: no inspection may be given a worker that is being terminated.
      this.unpark(worker);
      void worker.end();
    });
  }

  private unpark(worker: PooledWorker): void {
    const at = this.idle.indexOf(worker);
    if (at >= 0) this.idle.splice(at, 1);
  }

  private forget(worker: PooledWorker): void {
    this.all.delete(worker);
    this.unpark(worker);
  }
}

type Settle = (outcome: InspectionOutcome, answered: boolean) => void;

/** One worker thread: one inspection at a time; the outcome of a crash goes to the inspection running. */
class PooledWorker {
  inspections = 0;
  private readonly worker: Worker;
  private settle: Settle | undefined;
  /** Whether the worker has loaded the inspector; until then `onReady` waits to start the clock. */
  private ready = false;
  private onReady: (() => void) | undefined;
  private restTimer: NodeJS.Timeout | undefined;
  private readonly exited: Promise<void>;

  constructor(options: WorkerInspectorOptions, onExit: () => void) {
    const workerData: InspectionWorkerData = {
      blobs: options.blobs,
      inspectorModule: options.inspectorModule ?? DEFAULT_INSPECTOR_MODULE,
      nice: options.nice,
    };
    this.worker = new Worker(WORKER_ENTRY, {
      eval: OWN_EXTENSION === '.ts',
      workerData,
      resourceLimits: { maxOldGenerationSizeMb: options.memoryMb },
      stdout: false,
      stderr: false,
    });
    this.worker.on('message', (message: WorkerMessage) => {
      if (message === WORKER_READY) this.becomeReady();
      else this.finish(withPreviewBuffer(message), true);
    });
    this.worker.on('error', (error: Error & { code?: string }) =>
      this.finish(crashed(error, options), false),
    );
    this.exited = new Promise<void>((resolve) =>
      this.worker.once('exit', (code) => {
        clearTimeout(this.restTimer);
        onExit();
        this.finish(
          { kind: 'crashed', reason: `processing stopped unexpectedly (exit code ${code})`, again: true },
          false,
        );
        resolve();
      }),
    );
  }

  /** Leaves the idle state: keeps the process alive again while it works. */
  take(): void {
    clearTimeout(this.restTimer);
    this.worker.ref();
  }

  /** Idle: does not keep the process alive, and is ended after `ms` unless taken. */
  rest(ms: number, expire: () => void): void {
    this.worker.unref();
    this.restTimer = setTimeout(expire, ms);
    this.restTimer.unref();
  }

  /**
   * Runs one inspection; `reusable` when the worker answered it (not crashed, timed out or stopped).
   * Its time limit runs from when the worker is ready; a new worker has `startupMs` to get ready.
   */
  run(
    job: ProcessingJob,
    signal: AbortSignal,
    { limitMs, startupMs }: { limitMs: number; startupMs: number },
  ): Promise<{ outcome: InspectionOutcome; reusable: boolean }> {
    this.inspections += 1;
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const startClock = (): void => {
        clearTimeout(timer);
        timer = setTimeout(() => this.finish({ kind: 'timed_out', seconds: limitMs / 1000 }, false), limitMs);
      };
      if (this.ready) startClock();
      else {
        const reason = `processing could not start within ${startupMs / 1000} s (the processor is overloaded)`;
        timer = setTimeout(() => this.finish({ kind: 'crashed', reason, again: true }, false), startupMs);
        this.onReady = startClock;
      }
      const onAbort = (): void => this.finish({ kind: 'aborted' }, false);
      signal.addEventListener('abort', onAbort);
      this.settle = (outcome, answered) => {
        clearTimeout(timer);
        this.onReady = undefined;
        signal.removeEventListener('abort', onAbort);
        resolve({ outcome, reusable: answered });
      };
      this.worker.postMessage(job);
    });
  }

  /** Terminates the thread (at once, even mid-inspection); resolves once it has exited. */
  end(): Promise<void> {
    void this.worker.terminate();
    return this.exited;
  }

  /** Resolves once the thread has exited. */
  gone(): Promise<void> {
    return this.exited;
  }

  private becomeReady(): void {
    this.ready = true;
    const onReady = this.onReady;
    this.onReady = undefined;
    onReady?.();
  }

  private finish(outcome: InspectionOutcome, answered: boolean): void {
    const settle = this.settle;
    this.settle = undefined;
    settle?.(outcome, answered);
  }
}

function crashed(error: Error & { code?: string }, options: WorkerInspectorOptions): InspectionOutcome {
  return error.code === 'ERR_WORKER_OUT_OF_MEMORY'
    ? {
        kind: 'crashed',
        reason: `processing needed more than the ${options.memoryMb} MB of memory it is allowed`,
        again: false,
      }
    : { kind: 'crashed', reason: `processing failed unexpectedly: ${error.message}`, again: true };
}

/** Structured clone turns a Buffer into a plain Uint8Array. */
function withPreviewBuffer(outcome: InspectionOutcome): InspectionOutcome {
  if (outcome.kind !== 'inspected' || !outcome.inspection.ok || !outcome.inspection.preview) return outcome;
  const bytes: Uint8Array = outcome.inspection.preview;
  const preview = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { kind: 'inspected', inspection: { ...outcome.inspection, preview } };
}
