import type { Readable } from 'node:stream';

/**
 * What the processor needs of the format inspector (shared/formats/inspectUpload.ts): expected
 * format failures resolve `{ok: false, reason}`; a fault of the source (it threw) rejects.
 */
export interface ByteSource {
  readonly size: number;
  open(range?: { start: number; end?: number }): Promise<NodeJS.ReadableStream | Readable>;
}

export type Inspection =
  | {
      readonly ok: true;
      readonly metadata: Record<string, unknown> & { format: string };
      /** PNG bytes. */
      readonly preview: Buffer | null;
    }
  | { readonly ok: false; readonly reason: string };

export type InspectUpload = (
  source: ByteSource,
  filename: string,
  options?: { signal?: AbortSignal },
) => Promise<Inspection>;

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

/** Runs one inspection somewhere off the caller's event loop. */
export type InspectFile = (job: ProcessingJob, signal: AbortSignal) => Promise<InspectionOutcome>;
