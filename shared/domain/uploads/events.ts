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
}

export type UploadReceived = { readonly type: 'UploadReceived'; readonly data: UploadReceivedData };

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

export type UploadEvent = UploadReceived | UploadDeleted | UploadProcessingEvent;

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
  /** {} until completed; `{error}` once failed. */
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly previewBlobKey: string | null;
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
        status: 'uploaded',
        claim: null,
        completedAt: null,
        metadata: {},
        previewBlobKey: null,
      };
    case 'UploadDeleted':
      return { status: 'deleted' };
    default:
      return isLiveUpload(state) ? evolveProcessing(state, event) : state;
  }
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
        metadata: event.data.metadata,
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
