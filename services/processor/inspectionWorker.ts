import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import { BlobNotFoundError } from '../../shared/blobStore/blobStore';
import { type BlobSettings, openBlobStore } from './blobSettings';
import type { InspectUpload, InspectionOutcome, ProcessingJob } from './inspection';

/**
 * Worker-thread entry: inspects one upload, reading its bytes from the BlobStore itself (only the
 * result crosses back), and posts one InspectionOutcome. Started by workerInspector.
 */
export interface InspectionWorkerData {
  readonly blobs: BlobSettings;
  readonly job: ProcessingJob;
  /** Absolute path of a module exporting `inspectUpload`. */
  readonly inspectorModule: string;
}

const loadModule = createRequire(__filename);

async function inspect(data: InspectionWorkerData): Promise<InspectionOutcome> {
  // Loaded as CommonJS like this file (the build's output; tsx's require hook from sources).
  const inspector = loadModule(data.inspectorModule) as { inspectUpload: InspectUpload };
  const blobs = openBlobStore(data.blobs);
  const { job } = data;
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

// A throw here (the inspector module cannot load) reaches the parent as the worker's 'error'.
void inspect(workerData as InspectionWorkerData).then((outcome) => parentPort?.postMessage(outcome));
