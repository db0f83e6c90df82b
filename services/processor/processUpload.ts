import { Readable } from 'node:stream';
import type { BlobStore } from '#shared/blobStore/blobStore';
import { type Loaded, handleCommand, loadAggregate } from '#shared/commandHandling/handleCommand';
import { systemContext } from '#shared/commandHandling/commandContext';
import { ConflictError, NotFoundError } from '#shared/domain/domainErrors';
import type { EventStore } from '#shared/eventStore/eventStore';
import type { ProcessorConfig } from '#shared/config/config';
import { type UploadCommand, decideUpload } from '#shared/domain/uploads/decide';
import {
  type UploadState,
  isLiveUpload,
  uploadDecider,
  uploadPreviewKey,
  uploadStreamName,
} from '#shared/domain/uploads/events';
import type { Logger } from '#shared/logging/logger';
import type { UploadOutcome } from '#shared/metrics/metrics';
import { type Backoff, DEFAULT_BACKOFF, backoffDelay } from '#shared/runtime/backoff';
import { abortableSleep } from '#shared/runtime/abortableSleep';
import type { FaultReporter } from './faultReporter';
import type { InspectFile, Inspection, ProcessingJob } from './inspection';

export interface ProcessUploadDeps {
  readonly store: EventStore;
  readonly blobs: BlobStore;
  readonly inspect: InspectFile;
  readonly config: ProcessorConfig;
  readonly processorId: string;
  readonly clock: () => Date;
  readonly logger: Logger;
  readonly faults: FaultReporter;
  readonly backoff?: Backoff;
  /** A claim was taken from a processor whose lease lapsed (attempt 2 or later). */
  readonly onTakenOver?: () => void;
}

/** How a turn at one upload ended, for the scheduler. */
export type ProcessResult =
  /** Finished (by this processor or another) or gone: nothing more to do. */
  | { readonly kind: 'done'; readonly outcome?: UploadOutcome; readonly seconds?: number }
  /** Another processor holds it until this time (ms): look again then. */
  | { readonly kind: 'held'; readonly until: number }
  /** The processor is stopping (the claim, if any, lapses with its lease). */
  | { readonly kind: 'stopped' };

const SYSTEM = systemContext('upload-processor');

/**
 * One turn at an upload: claim it (an append with the expected revision, so of two processors only
 * one wins), inspect it in a worker while renewing the lease, store its preview, then append the
 * outcome as the claim's attempt. Transient faults are retried with capped backoff for as long as
 * the claim is held; a lost claim (taken back, or the upload deleted) drops the work and its preview.
 */
export async function processUpload(
  deps: ProcessUploadDeps,
  job: ProcessingJob,
  signal: AbortSignal,
  known?: KnownStream,
): Promise<ProcessResult> {
  const claim = await retrying(deps, 'claiming an upload', signal, () =>
    claimUpload(deps, job.uploadId, known),
  );
  if (claim === STOPPED) return { kind: 'stopped' };
  if (claim.kind !== 'claimed') return claim;
  const { attempt } = claim;
  // The stream as this processor last left it: the lease renewals and the outcome append at its
  // revision without reading it first (each keeps it current; a stale one costs one read).
  const stream: { known: KnownStream } = { known: claim.known };
  if (attempt > 1) deps.onTakenOver?.();
  const started = Date.now();
  const lost = new AbortController();
  const working = AbortSignal.any([signal, lost.signal]);
  const renewal = renewLeaseWhileWorking(deps, job.uploadId, attempt, stream, lost, working);
  try {
    const inspection = await inspectWithRetries(deps, job, working);
    if (inspection === STOPPED) return standing(deps, job.uploadId, signal);
    const outcome = await recordOutcome(deps, job.uploadId, attempt, stream, inspection, working);
    if (outcome === STOPPED) return standing(deps, job.uploadId, signal);
    return { kind: 'done', outcome, seconds: (Date.now() - started) / 1000 };
  } finally {
    lost.abort();
    await renewal;
  }
}

const STOPPED = Symbol('stopped');
/** An upload stream's state at a revision, as last seen. */
export type KnownStream = Loaded<UploadState>;
type Claim =
  ProcessResult | { readonly kind: 'claimed'; readonly attempt: number; readonly known: KnownStream };

async function claimUpload(
  deps: ProcessUploadDeps,
  uploadId: string,
  known: KnownStream | undefined,
): Promise<Claim> {
  const now = deps.clock();
  const leaseUntil = new Date(now.getTime() + deps.config.leaseSeconds * 1000).toISOString();
  const command: UploadCommand = {
    type: 'ClaimUpload',
    data: {
      processorId: deps.processorId,
      now: now.toISOString(),
      leaseUntil,
      maxAttempts: deps.config.maxAttempts,
    },
  };
  try {
    const { state, events, revision } = await decideOn(deps.store, uploadId, command, known);
    if (
      state.status === 'processing' &&
      isLiveUpload(state) &&
      state.claim &&
      events[0]?.type === 'UploadProcessingStarted'
    )
      return { kind: 'claimed', attempt: state.claim.attempt, known: { state, revision } };
    deps.logger.warn('upload failed: its claims kept lapsing', { upload_id: uploadId });
    return { kind: 'done', outcome: 'failed' };
  } catch (error) {
    if (error instanceof NotFoundError) return { kind: 'done' };
    if (!(error instanceof ConflictError)) throw error;
    const { state } = await loadAggregate(deps.store, uploadStreamName(uploadId), uploadDecider);
    return whereItStands(state, now.getTime());
  }
}

/**
 * After the claim was lost or the work stopped: where the stream says the upload stands. Never
 * simply "done": an upload another attempt holds must come back here if that attempt dies too.
 */
async function standing(
  deps: ProcessUploadDeps,
  uploadId: string,
  signal: AbortSignal,
): Promise<ProcessResult> {
  if (signal.aborted) return { kind: 'stopped' };
  const loaded = await retrying(deps, 'reading an upload', signal, () =>
    loadAggregate(deps.store, uploadStreamName(uploadId), uploadDecider),
  );
  return loaded === STOPPED ? { kind: 'stopped' } : whereItStands(loaded.state, deps.clock().getTime());
}

/** After a refused claim: finished or gone, held by another processor until its lease ends, or still to do. */
function whereItStands(state: UploadState, now: number): ProcessResult {
  if (!isLiveUpload(state) || state.status === 'completed' || state.status === 'failed')
    return { kind: 'done' };
  if (state.status === 'processing' && state.claim)
    return { kind: 'held', until: Date.parse(state.claim.leaseUntil) };
  // Still `uploaded` (the claim lost every race of its contention budget): try again shortly.
  return { kind: 'held', until: now + RETRY_CLAIM_MS };
}

const RETRY_CLAIM_MS = 1000;

async function decideOn(store: EventStore, uploadId: string, command: UploadCommand, known?: KnownStream) {
  return handleCommand(
    store,
    uploadStreamName(uploadId),
    uploadDecider,
    (state) => decideUpload(command, state),
    SYSTEM,
    known ? { known } : {},
  );
}

/** Renews the lease every third of its length; a refused renewal means the claim is lost. */
async function renewLeaseWhileWorking(
  deps: ProcessUploadDeps,
  uploadId: string,
  attempt: number,
  stream: { known: KnownStream },
  lost: AbortController,
  working: AbortSignal,
): Promise<void> {
  const every = (deps.config.leaseSeconds * 1000) / 3;
  while (!working.aborted) {
    await abortableSleep(every, working);
    if (working.aborted) return;
    const now = deps.clock();
    const command: UploadCommand = {
      type: 'RenewProcessingLease',
      data: {
        attempt,
        processorId: deps.processorId,
        now: now.toISOString(),
        leaseUntil: new Date(now.getTime() + deps.config.leaseSeconds * 1000).toISOString(),
      },
    };
    try {
      const renewed = await decideOn(deps.store, uploadId, command, stream.known);
      stream.known = { state: renewed.state, revision: renewed.revision };
    } catch (error) {
      if (error instanceof ConflictError || error instanceof NotFoundError) {
        deps.logger.warn('lost the claim on an upload while processing it', { upload_id: uploadId, attempt });
        lost.abort();
        return;
      }
      // A transient fault: the next renewal (or the outcome's append) tries again before the lease ends.
      deps.faults.fault('renewing a lease', error);
    }
  }
}

/**
 * Runs the inspector until it gives an answer: source faults retried, crashes that may go otherwise
 * next time retried up to `maxAttempts` runs. A run past its time limit fails the upload at once: the
 * same bytes would take as long again.
 */
async function inspectWithRetries(
  deps: ProcessUploadDeps,
  job: ProcessingJob,
  signal: AbortSignal,
): Promise<Inspection | typeof STOPPED> {
  let runs = 0;
  let faults = 0;
  for (;;) {
    const outcome = await deps.inspect(job, signal);
    switch (outcome.kind) {
      case 'inspected':
        deps.faults.recovered();
        return outcome.inspection;
      case 'aborted':
        return STOPPED;
      case 'timed_out':
        deps.logger.warn('upload processing ran past its time limit; the upload fails', {
          upload_id: job.uploadId,
          size_bytes: job.sizeBytes,
          limit_seconds: outcome.seconds,
        });
        return { ok: false, reason: timedOutReason(job.sizeBytes, outcome.seconds) };
      case 'crashed': {
        runs += 1;
        if (!outcome.again || runs >= deps.config.maxAttempts)
          return {
            ok: false,
            reason:
              runs > 1 ? `${outcome.reason} (${runs} times); the file may be malformed` : outcome.reason,
          };
        deps.logger.warn('upload processing did not finish; trying again', {
          upload_id: job.uploadId,
          runs,
          why: outcome.reason,
        });
        break;
      }
      case 'source_fault':
        if (outcome.missing) return { ok: false, reason: 'the stored bytes of this upload are missing' };
        deps.faults.fault('reading an upload', new Error(outcome.message));
        faults += 1;
        await pause(deps, faults, signal);
        break;
    }
    if (signal.aborted) return STOPPED;
  }
}

/** For the uploader: what happened, that it was not retried and why, and what to do about it. */
export function timedOutReason(sizeBytes: number, limitSeconds: number): string {
  return (
    `processing was stopped after ${limitSeconds} s, the time allowed for a file of ${readableSize(sizeBytes)}, ` +
    `and was not retried (it would take as long again): the file is probably malformed, or expands far ` +
    `beyond its size when decompressed. Check that it opens in an image viewer; if it does, upload it ` +
    `uncompressed, which is allowed more time`
  );
}

function readableSize(bytes: number): string {
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB'];
  let size = bytes;
  let unit = 0;
  while (size >= 1024 && unit < units.length - 1) {
    size /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} bytes` : `${size.toFixed(1)} ${units[unit]}`;
}

/** Stores the preview (before the event that names it), then appends the outcome as this attempt. */
async function recordOutcome(
  deps: ProcessUploadDeps,
  uploadId: string,
  attempt: number,
  stream: { readonly known: KnownStream },
  inspection: Inspection,
  signal: AbortSignal,
): Promise<UploadOutcome | typeof STOPPED> {
  const previewKey = inspection.ok && inspection.preview ? uploadPreviewKey(uploadId) : null;
  if (previewKey && inspection.ok && inspection.preview) {
    const png = inspection.preview;
    const stored = await retrying(deps, 'storing a preview', signal, () =>
      deps.blobs.put(previewKey, Readable.from([png]), { contentType: 'image/png' }),
    );
    if (stored === STOPPED) return STOPPED;
  }
  const now = deps.clock().toISOString();
  const command: UploadCommand = inspection.ok
    ? {
        type: 'CompleteProcessing',
        data: { attempt, metadata: inspection.metadata, previewBlobKey: previewKey, now },
      }
    : { type: 'FailProcessing', data: { attempt, reason: inspection.reason, now } };
  try {
    const appended = await retrying(deps, 'recording an outcome', signal, () =>
      decideOn(deps.store, uploadId, command, stream.known),
    );
    if (appended !== STOPPED) return inspection.ok ? 'completed' : 'failed';
  } catch (error) {
    if (!(error instanceof ConflictError || error instanceof NotFoundError)) throw error;
    deps.logger.warn('could not record the outcome of an upload: the claim was lost or the upload deleted', {
      upload_id: uploadId,
      attempt,
    });
  }
  if (previewKey) await dropPreview(deps, uploadId, previewKey);
  return STOPPED;
}

/**
 * The preview was stored for an outcome that was not recorded. Its key is the upload's one key: while
 * another attempt holds or completed the upload, the key is that attempt's (it stores its own
 * preview before completing), so only an upload that is gone or failed has its preview deleted.
 * A stop before the outcome leaves the key to the attempt that takes the upload back.
 */
async function dropPreview(deps: ProcessUploadDeps, uploadId: string, key: string): Promise<void> {
  // Unknown (the store is unreachable): keep it; deleting the upload deletes its preview key too.
  const loaded = await loadAggregate(deps.store, uploadStreamName(uploadId), uploadDecider).catch(
    () => undefined,
  );
  if (!loaded || (isLiveUpload(loaded.state) && loaded.state.status !== 'failed')) return;
  await deletePreview(deps, key);
}

async function deletePreview(deps: ProcessUploadDeps, key: string): Promise<void> {
  await deps.blobs.delete(key).catch((error: unknown) =>
    deps.logger.error('could not delete the preview of an upload it was not recorded for', {
      blob_key: key,
      error,
    }),
  );
}

/**
 * Runs `work` until it succeeds, retrying transient faults with capped backoff. Domain refusals
 * (ConflictError, NotFoundError) are answers, not faults: they are thrown to the caller.
 */
async function retrying<T>(
  deps: ProcessUploadDeps,
  what: string,
  signal: AbortSignal,
  work: () => Promise<T>,
): Promise<T | typeof STOPPED> {
  for (let failures = 1; !signal.aborted; failures++) {
    try {
      const result = await work();
      deps.faults.recovered();
      return result;
    } catch (error) {
      if (error instanceof ConflictError || error instanceof NotFoundError) throw error;
      deps.faults.fault(what, error);
      await pause(deps, failures, signal);
    }
  }
  return STOPPED;
}

function pause(deps: ProcessUploadDeps, failures: number, signal: AbortSignal): Promise<void> {
  return abortableSleep(backoffDelay(deps.backoff ?? DEFAULT_BACKOFF, failures, Math.random), signal);
}
