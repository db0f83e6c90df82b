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
    /** Why: its brain was deleted, or the command that received it failed. */
    readonly reason: 'brain_deleted' | 'command_failed';
    readonly deletedBy: number;
    readonly deletedAt: string;
  };
};

export type UploadEvent = UploadReceived | UploadDeleted;

/** Processing states (processing, completed, failed) are added by the processing work. */
export type UploadStatus = 'uploaded';

export type UploadState =
  | { readonly status: 'none' }
  | (UploadReceivedData & { readonly status: UploadStatus })
  | { readonly status: 'deleted' };

export const initialUploadState = (): UploadState => ({ status: 'none' });

export function evolveUpload(state: UploadState, event: UploadEvent): UploadState {
  switch (event.type) {
    case 'UploadReceived':
      return { ...event.data, status: 'uploaded' };
    case 'UploadDeleted':
      return { status: 'deleted' };
  }
}

export const uploadDecider = { initialState: initialUploadState, evolve: evolveUpload };
export const uploadStreamName = (uploadId: string): string => `upload-${uploadId}`;
