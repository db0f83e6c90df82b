import { type BidsSidecar, combinedSidecar, metadataWithSidecar } from './sidecar';

/** Events of the `upload-<uuid>` stream: one uploaded file and what becomes of it. */
export interface UploadReceivedData {
  readonly uploadId: string;
  /** The form field `name`, else the original file name. */
  readonly name: string;
  /** The original file name reduced to its base name. */
  readonly filename: string;
  readonly sizeBytes: number;
  /** Lowercase hex SHA-256 of the stored bytes. */
  readonly sha256: string;
  /** As the client sent it: a claim, checked when the file is processed. */
  readonly mimeType: string;
  readonly blobKey: string;
  readonly uploaderId: number;
  readonly associatedBrainId: number | null;
  readonly receivedAt: string;
  /** A BIDS JSON sidecar sent with the file (sidecar.ts); absent from events written before it existed. */
  readonly sidecar?: BidsSidecar | null;
}

export type UploadReceived = { readonly type: 'UploadReceived'; readonly data: UploadReceivedData };

/**
 * An upload made on its own became the file of a brain (POST /api/brains/ with `upload`), in the
 * same transaction as that brain's BrainCreated. `sidecar`: one sent with the brain, merged over
 * the upload's own (null when none was sent).
 */
export type UploadAttachedToBrain = {
  readonly type: 'UploadAttachedToBrain';
  readonly data: {
    readonly uploadId: string;
    /** Named as in UploadReceived, so the audit log's references find the brain's uploads. */
    readonly associatedBrainId: number;
    readonly sidecar: BidsSidecar | null;
    readonly attachedBy: number;
    readonly attachedAt: string;
  };
};

export type UploadDeleted = {
  readonly type: 'UploadDeleted';
  readonly data: {
    readonly uploadId: string;
    /** Why: its brain was deleted, the command that received it failed, or its uploader (or staff) deleted it. */
    readonly reason: 'brain_deleted' | 'command_failed' | 'owner_request';
    readonly deletedBy: number;
    readonly deletedAt: string;
  };
};

/** A processor claimed the upload: attempt n holds it until `leaseUntil`, unless it renews. */
export type UploadProcessingStarted = {
  readonly type: 'UploadProcessingStarted';
  readonly data: {
    readonly uploadId: string;
    /** 1-based; a claim taken back from a processor that stopped is the next attempt. */
    readonly attempt: number;
    readonly processorId: string;
    /** ISO 8601: after this, another processor may take the upload back. */
    readonly leaseUntil: string;
    readonly startedAt: string;
  };
};

/** The processor holding attempt n is still working: its lease now runs until `leaseUntil`. */
export type UploadProcessingLeaseRenewed = {
  readonly type: 'UploadProcessingLeaseRenewed';
  readonly data: {
    readonly uploadId: string;
    readonly attempt: number;
    readonly processorId: string;
    readonly leaseUntil: string;
    readonly renewedAt: string;
  };
};

export type UploadProcessingCompleted = {
  readonly type: 'UploadProcessingCompleted';
  readonly data: {
    readonly uploadId: string;
    readonly attempt: number;
    /** What the file's content says it is; always names its `format`. */
    readonly metadata: Readonly<Record<string, unknown>> & { readonly format: string };
    /** BlobStore key of a PNG preview, stored before this event; null when there is none. */
    readonly previewBlobKey: string | null;
    readonly completedAt: string;
  };
};

export type UploadProcessingFailed = {
  readonly type: 'UploadProcessingFailed';
  readonly data: {
    readonly uploadId: string;
    readonly attempt: number;
    /** For a person: what is wrong with the file (or why processing gave up). */
    readonly reason: string;
    readonly completedAt: string;
  };
};

export type UploadProcessingEvent =
  UploadProcessingStarted | UploadProcessingLeaseRenewed | UploadProcessingCompleted | UploadProcessingFailed;

export type UploadEvent = UploadReceived | UploadAttachedToBrain | UploadDeleted | UploadProcessingEvent;

export const UPLOAD_PROCESSING_EVENT_TYPES: ReadonlySet<UploadProcessingEvent['type']> = new Set([
  'UploadProcessingStarted',
  'UploadProcessingLeaseRenewed',
  'UploadProcessingCompleted',
  'UploadProcessingFailed',
]);

/** interface-spec 3.1: uploaded -> processing -> completed | failed, never backwards. */
export type UploadStatus = 'uploaded' | 'processing' | 'completed' | 'failed';

/** The current claim on an upload in `processing` (the last one, once it ended). */
export interface ProcessingClaim {
  readonly attempt: number;
  readonly processorId: string;
  readonly leaseUntil: string;
  readonly startedAt: string;
}

/** An upload that exists and is not deleted, in any processing status. */
export type LiveUpload = UploadReceivedData & {
  readonly status: UploadStatus;
  /** null until the first claim. */
  readonly claim: ProcessingClaim | null;
  readonly completedAt: string | null;
  /** {} until completed; then what processing read, with the sidecar merged in (sidecar.ts); `{error}` once failed. */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** What processing read from the file (null before it completed): the sidecar is merged over it again at attach. */
  readonly extractedMetadata: Readonly<Record<string, unknown>> | null;
  readonly previewBlobKey: string | null;
  /** When it was attached to its brain (UploadAttachedToBrain); null when received for it, or for none. */
  readonly attachedAt: string | null;
};

export type UploadState = { readonly status: 'none' } | LiveUpload | { readonly status: 'deleted' };

export const initialUploadState = (): UploadState => ({ status: 'none' });

export const isLiveUpload = (state: UploadState): state is LiveUpload =>
  state.status !== 'none' && state.status !== 'deleted';

export function evolveUpload(state: UploadState, event: UploadEvent): UploadState {
  switch (event.type) {
    case 'UploadReceived':
      return {
        ...event.data,
        sidecar: event.data.sidecar ?? null,
        status: 'uploaded',
        claim: null,
        completedAt: null,
        metadata: {},
        extractedMetadata: null,
        previewBlobKey: null,
        attachedAt: null,
      };
    case 'UploadAttachedToBrain':
      return isLiveUpload(state) ? attached(state, event.data) : state;
    case 'UploadDeleted':
      return { status: 'deleted' };
    default:
      return isLiveUpload(state) ? evolveProcessing(state, event) : state;
  }
}

function attached(state: LiveUpload, data: UploadAttachedToBrain['data']): LiveUpload {
  const sidecar = combinedSidecar(state.sidecar, data.sidecar);
  return {
    ...state,
    associatedBrainId: data.associatedBrainId,
    attachedAt: data.attachedAt,
    sidecar,
    metadata:
      state.status === 'completed' && state.extractedMetadata
        ? metadataWithSidecar(state.extractedMetadata, sidecar)
        : state.metadata,
  };
}

function evolveProcessing(state: LiveUpload, event: UploadProcessingEvent): LiveUpload {
  switch (event.type) {
    case 'UploadProcessingStarted': {
      const { attempt, processorId, leaseUntil, startedAt } = event.data;
      return { ...state, status: 'processing', claim: { attempt, processorId, leaseUntil, startedAt } };
    }
    case 'UploadProcessingLeaseRenewed':
      return state.claim ? { ...state, claim: { ...state.claim, leaseUntil: event.data.leaseUntil } } : state;
    case 'UploadProcessingCompleted':
      return {
        ...state,
        status: 'completed',
        completedAt: event.data.completedAt,
        metadata: metadataWithSidecar(event.data.metadata, state.sidecar),
        extractedMetadata: event.data.metadata,
        previewBlobKey: event.data.previewBlobKey,
      };
    case 'UploadProcessingFailed':
      return {
        ...state,
        status: 'failed',
        completedAt: event.data.completedAt,
        metadata: { error: event.data.reason },
      };
  }
}

export const uploadDecider = { initialState: initialUploadState, evolve: evolveUpload };
export const uploadStreamName = (uploadId: string): string => `upload-${uploadId}`;
export const UPLOAD_STREAM_PREFIX = 'upload-';

/** Where an upload's PNG preview is stored: derived from its id, so a delete finds it in any state. */
export const uploadPreviewKey = (uploadId: string): string => `previews/${uploadId}.png`;
