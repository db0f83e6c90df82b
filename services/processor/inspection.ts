import type { ByteSource } from '#shared/formats/byteSource';
import type { Inspection } from '#shared/formats/inspection';
import type { inspectUpload } from '#shared/formats/inspectUpload';

export type { ByteSource, Inspection };

/**
 * The inspector a worker loads (shared/formats/inspectUpload.ts): expected format failures resolve
 * `{ok: false, reason}`; a fault of the source (it threw) rejects.
 */
export type InspectUpload = typeof inspectUpload;

/** One upload to inspect: where its bytes are and what it is called. */
export interface ProcessingJob {
  readonly uploadId: string;
  readonly blobKey: string;
  readonly filename: string;
  readonly sizeBytes: number;
}

/** How one inspection run ended, as the processor must tell them apart. */
export type InspectionOutcome =
  | { readonly kind: 'inspected'; readonly inspection: Inspection }
  /** Reading the stored bytes failed; `missing`: they are gone (not worth retrying). */
  | { readonly kind: 'source_fault'; readonly message: string; readonly missing: boolean }
  /** The run took longer than allowed and was stopped. */
  | { readonly kind: 'timed_out'; readonly seconds: number }
  /**
   * The run died: `reason` is for a person. `again`: it may go otherwise next time (not out of
   * memory, which the same file will be again).
   */
  | { readonly kind: 'crashed'; readonly reason: string; readonly again: boolean }
  /** The processor is stopping. */
  | { readonly kind: 'aborted' };

/** A worker posts this once it has loaded the inspector: an upload's time limit runs from then. */
export const WORKER_READY = 'ready';
/** What a worker thread posts: that it is ready, then one outcome per job. */
export type WorkerMessage = typeof WORKER_READY | InspectionOutcome;

/** Runs one inspection somewhere off the caller's event loop. */
export type InspectFile = (job: ProcessingJob, signal: AbortSignal) => Promise<InspectionOutcome>;

/** Where inspections run, and what it keeps between them (worker threads). */
export interface Inspector {
  readonly inspect: InspectFile;
  /** After the last inspection: ends what it keeps. */
  close(): Promise<void>;
}
