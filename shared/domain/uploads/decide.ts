import { ConflictError, InvalidFieldError, NotFoundError } from '#shared/domain/domainErrors';
import type { Actor } from '#shared/domain/actor';
import {
  type LiveUpload,
  type UploadDeleted,
  type UploadEvent,
  type UploadProcessingCompleted,
  type UploadReceivedData,
  type UploadState,
  isLiveUpload,
} from './events';
import type { BidsSidecar } from './sidecar';

export type ReceiveUpload = { readonly type: 'ReceiveUpload'; readonly data: UploadReceivedData };

/**
 * The caller makes one of their own uploads the file of the brain `brainId` (being created in the
 * same unit of work). Only its uploader may, staff included: decisions.md says "one of the
 * caller's own".
 */
export type AttachUploadToBrain = {
  readonly type: 'AttachUploadToBrain';
  readonly data: {
    readonly brainId: number;
    readonly sidecar: BidsSidecar | null;
    /**
     * The brain the upload names whose stream the handler has fenced: it will never be created (the
     * create that attached the upload to it failed half-way, on a store without a unit of work), so
     * the upload is free again.
     */
    readonly abandonedBrainId?: number;
    readonly actor: Actor;
    readonly now: string;
  };
};

export const UPLOAD_NOT_FOUND = 'No file upload of yours has this id.';
export const UPLOAD_TAKEN = 'This file upload is already the file of a brain.';

export type DeleteUpload = {
  readonly type: 'DeleteUpload';
  readonly data: {
    readonly reason: UploadDeleted['data']['reason'];
    readonly actor: Actor;
    readonly now: string;
  };
};

/**
 * A processor asks to process the upload until `leaseUntil`. Granted for an upload still in
 * `uploaded`, or in `processing` whose lease has run out (its processor stopped): the next attempt.
 * An expired claim that was already the `maxAttempts`-th ends the upload as failed instead, so a
 * file that keeps killing its processor cannot be retried for ever.
 */
export type ClaimUpload = {
  readonly type: 'ClaimUpload';
  readonly data: {
    readonly processorId: string;
    readonly now: string;
    readonly leaseUntil: string;
    readonly maxAttempts: number;
  };
};

/** Attempt n's holder extends its lease while it is still working. */
export type RenewProcessingLease = {
  readonly type: 'RenewProcessingLease';
  readonly data: {
    readonly attempt: number;
    readonly processorId: string;
    readonly now: string;
    readonly leaseUntil: string;
  };
};

export type CompleteProcessing = {
  readonly type: 'CompleteProcessing';
  readonly data: Omit<UploadProcessingCompleted['data'], 'uploadId' | 'completedAt'> & {
    readonly now: string;
  };
};

export type FailProcessing = {
  readonly type: 'FailProcessing';
  readonly data: { readonly attempt: number; readonly reason: string; readonly now: string };
};

export type UploadCommand =
  | ReceiveUpload
  | AttachUploadToBrain
  | DeleteUpload
  | ClaimUpload
  | RenewProcessingLease
  | CompleteProcessing
  | FailProcessing;

/**
 * Deleting is idempotent: a brain's delete may be retried after it removed some of its uploads.
 * Processing commands on an upload that is gone are a NotFoundError; on one whose status or attempt
 * does not allow them (claimed by another, already finished, a stale attempt) a ConflictError.
 */
export function decideUpload(command: UploadCommand, state: UploadState): UploadEvent[] {
  switch (command.type) {
    case 'ReceiveUpload':
      if (state.status !== 'none') throw new ConflictError(`Upload ${command.data.uploadId} already exists.`);
      return [{ type: 'UploadReceived', data: command.data }];
    case 'AttachUploadToBrain':
      return decideAttach(command.data, state);
    case 'DeleteUpload': {
      if (state.status === 'deleted') return [];
      const live = liveOrNotFound(state);
      const { reason, actor, now } = command.data;
      // Decided on the stream, not only checked before: an attach may land in between.
      if (reason === 'owner_request' && live.associatedBrainId !== null)
        throw new ConflictError(
          `This upload is the file of brain ${live.associatedBrainId}: delete the brain to delete its file.`,
        );
      return [
        {
          type: 'UploadDeleted',
          data: { uploadId: live.uploadId, reason, deletedBy: actor.userId, deletedAt: now },
        },
      ];
    }
    case 'ClaimUpload':
      return decideClaim(command.data, liveOrNotFound(state));
    case 'RenewProcessingLease': {
      const live = currentAttempt(liveOrNotFound(state), command.data.attempt);
      const { attempt, processorId, leaseUntil, now } = command.data;
      if (live.claim?.processorId !== processorId)
        throw new ConflictError(`Upload ${live.uploadId}: attempt ${attempt} is held by another processor.`);
      return [
        {
          type: 'UploadProcessingLeaseRenewed',
          data: { uploadId: live.uploadId, attempt, processorId, leaseUntil, renewedAt: now },
        },
      ];
    }
    case 'CompleteProcessing': {
      const live = currentAttempt(liveOrNotFound(state), command.data.attempt);
      const { attempt, metadata, previewBlobKey, now } = command.data;
      return [
        {
          type: 'UploadProcessingCompleted',
          data: { uploadId: live.uploadId, attempt, metadata, previewBlobKey, completedAt: now },
        },
      ];
    }
    case 'FailProcessing': {
      const live = currentAttempt(liveOrNotFound(state), command.data.attempt);
      const { attempt, reason, now } = command.data;
      return [
        {
          type: 'UploadProcessingFailed',
          data: { uploadId: live.uploadId, attempt, reason, completedAt: now },
        },
      ];
    }
    default: {
      const unknown: never = command;
      throw new Error(`unknown upload command ${JSON.stringify(unknown)}`);
    }
  }
}

/**
 * An upload someone else made reads as unknown (its existence is private). Attaching it to the
 * brain it already belongs to again is no change (a retried request).
 */
function decideAttach(command: AttachUploadToBrain['data'], state: UploadState): UploadEvent[] {
  const { brainId, sidecar, abandonedBrainId, actor, now } = command;
  if (!isLiveUpload(state) || state.uploaderId !== actor.userId)
    throw InvalidFieldError.field('upload', UPLOAD_NOT_FOUND);
  if (state.associatedBrainId === brainId) return [];
  if (state.associatedBrainId !== null && state.associatedBrainId !== abandonedBrainId)
    throw InvalidFieldError.field('upload', UPLOAD_TAKEN);
  if (state.status === 'failed') {
    const reason = typeof state.metadata.error === 'string' ? `: ${state.metadata.error}` : '.';
    throw InvalidFieldError.field('upload', `This file upload failed processing${reason}`);
  }
  return [
    {
      type: 'UploadAttachedToBrain',
      data: {
        uploadId: state.uploadId,
        associatedBrainId: brainId,
        sidecar,
        attachedBy: actor.userId,
        attachedAt: now,
      },
    },
  ];
}

function liveOrNotFound(state: UploadState): LiveUpload {
  if (!isLiveUpload(state)) throw new NotFoundError();
  return state;
}

function decideClaim(command: ClaimUpload['data'], live: LiveUpload): UploadEvent[] {
  const { processorId, now, leaseUntil, maxAttempts } = command;
  const uploadId = live.uploadId;
  const started = (attempt: number): UploadEvent[] => [
    { type: 'UploadProcessingStarted', data: { uploadId, attempt, processorId, leaseUntil, startedAt: now } },
  ];
  if (live.status === 'uploaded') return started(1);
  if (live.status !== 'processing' || !live.claim)
    throw new ConflictError(`Upload ${uploadId} is already ${live.status}.`);
  const { attempt } = live.claim;
  if (Date.parse(live.claim.leaseUntil) > Date.parse(now))
    throw new ConflictError(
      `Upload ${uploadId}: attempt ${attempt} holds it until ${live.claim.leaseUntil}.`,
    );
  if (attempt < maxAttempts) return started(attempt + 1);
  const reason =
    `processing stopped before finishing ${attempt} times (the processor died or lost its lease ` +
    `while working on this file); giving up`;
  return [{ type: 'UploadProcessingFailed', data: { uploadId, attempt, reason, completedAt: now } }];
}

/** The upload is in `processing` under this attempt: only the current attempt may finish it. */
function currentAttempt(live: LiveUpload, attempt: number): LiveUpload {
  if (live.status !== 'processing')
    throw new ConflictError(`Upload ${live.uploadId} is ${live.status}, not processing.`);
  if (live.claim?.attempt !== attempt)
    throw new ConflictError(
      `Upload ${live.uploadId}: attempt ${attempt} was superseded by attempt ${String(live.claim?.attempt)}.`,
    );
  return live;
}
