import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { BlobSettings } from './blobSettings';
import type { InspectFile, InspectionOutcome, ProcessingJob } from './inspection';
import type { InspectionWorkerData } from './inspectionWorker';

export interface WorkerInspectorOptions {
  readonly blobs: BlobSettings;
  /** Absolute path of a module exporting `inspectUpload` (default: shared/formats/inspectUpload). */
  readonly inspectorModule?: string;
  readonly timeoutMs: number;
  /** Heap limit of each worker. */
  readonly memoryMb: number;
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

/**
 * Inspects each upload in a worker thread of its own, never on the caller's event loop: a heap
 * limit, and a deadline after which the worker is terminated. Memory a run leaves behind goes with
 * its worker.
 */
export function workerInspector(options: WorkerInspectorOptions): InspectFile {
  return (job, signal) => runWorker(options, job, signal);
}

function runWorker(
  options: WorkerInspectorOptions,
  job: ProcessingJob,
  signal: AbortSignal,
): Promise<InspectionOutcome> {
  if (signal.aborted) return Promise.resolve({ kind: 'aborted' });
  const data: InspectionWorkerData = {
    blobs: options.blobs,
    job,
    inspectorModule: options.inspectorModule ?? DEFAULT_INSPECTOR_MODULE,
  };
  const worker = new Worker(WORKER_ENTRY, {
    eval: OWN_EXTENSION === '.ts',
    workerData: data,
    resourceLimits: { maxOldGenerationSizeMb: options.memoryMb },
    stdout: false,
    stderr: false,
  });
  return new Promise<InspectionOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: InspectionOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      void worker.terminate();
      resolve(outcome);
    };
    const timer = setTimeout(
      () => finish({ kind: 'timed_out', seconds: options.timeoutMs / 1000 }),
      options.timeoutMs,
    );
    const onAbort = (): void => finish({ kind: 'aborted' });
    signal.addEventListener('abort', onAbort);
    worker.once('message', (outcome: InspectionOutcome) => finish(withPreviewBuffer(outcome)));
    worker.once('error', (error: Error & { code?: string }) =>
      finish(
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? {
              kind: 'crashed',
              reason: `processing needed more than the ${options.memoryMb} MB of memory it is allowed`,
              again: false,
            }
          : { kind: 'crashed', reason: `processing failed unexpectedly: ${error.message}`, again: true },
      ),
    );
    worker.once('exit', (code) =>
      finish({ kind: 'crashed', reason: `processing stopped unexpectedly (exit code ${code})`, again: true }),
    );
  });
}

/** Structured clone turns a Buffer into a plain Uint8Array. */
function withPreviewBuffer(outcome: InspectionOutcome): InspectionOutcome {
  if (outcome.kind !== 'inspected' || !outcome.inspection.ok || !outcome.inspection.preview) return outcome;
  const bytes: Uint8Array = outcome.inspection.preview;
  const preview = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { kind: 'inspected', inspection: { ...outcome.inspection, preview } };
}
