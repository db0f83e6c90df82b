import { createRequire } from 'node:module';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { BlobNotFoundError } from '#shared/blobStore/blobStore';
import { type BlobSettings, openBlobStore } from './blobSettings';
import { type InspectUpload, type InspectionOutcome, type ProcessingJob, WORKER_READY } from './inspection';

/**
 * Worker-thread entry, kept by workerInspector's pool: loads the inspector once, then inspects the
 * uploads it is sent one at a time, reading each upload's bytes from the BlobStore itself (only the
 * result crosses back), and posts one InspectionOutcome per job.
 */
export interface InspectionWorkerData {
  readonly blobs: BlobSettings;
  /** Absolute path of a module exporting `inspectUpload`. */
  readonly inspectorModule: string;
  /** The nice value of this thread (0 to 19). */
  readonly nice: number;
}

const loadModule = createRequire(__filename);

/**
 * A lower CPU priority for this thread only (Linux keeps a nice value per thread), so requests on
 * the process's main thread go first when the cores are busy. Elsewhere it may fail: then it stays.
 */
function lowerPriority(nice: number): void {
  if (nice === 0) return;
  try {
    setPriority(nice);
  } catch {
    // Not permitted or not supported here: processing runs at the normal priority.
  }
}

const data = workerData as InspectionWorkerData;
lowerPriority(data.nice);
// Loaded as CommonJS like this file (the build's output; tsx's require hook from sources). A throw
// here (the inspector module cannot load) reaches the parent as the worker's 'error'.
const inspector = loadModule(data.inspectorModule) as { inspectUpload: InspectUpload };
const blobs = openBlobStore(data.blobs);

async function inspect(job: ProcessingJob): Promise<InspectionOutcome> {
  const source = {
    size: job.sizeBytes,
    open: (range?: { start: number; end?: number }) => blobs.get(job.blobKey, range),
  };
  try {
    return { kind: 'inspected', inspection: await inspector.inspectUpload(source, job.filename) };
  } catch (error) {
    return {
      kind: 'source_fault',
      message: error instanceof Error ? error.message : String(error),
      missing: error instanceof BlobNotFoundError,
    };
  }
}

parentPort?.postMessage(WORKER_READY);
parentPort?.on('message', (job: ProcessingJob) => {
  void inspect(job).then((outcome) => parentPort?.postMessage(outcome));
});
