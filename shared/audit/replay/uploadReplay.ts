/**
 * A file upload as GET /api/file-uploads/{id}/ shows it, rebuilt from its stream with its uploader's
 * and its brain's (the names the read model joins). The row is the one uploadsProjection would hold.
 */
import type { RecordedEvent } from '#shared/eventStore/eventStore';
import {
  type LiveUpload,
  type UploadAttachedToBrain,
  type UploadReceived,
  isLiveUpload,
} from '#shared/domain/uploads/events';
import { fileUploadDownloadUrl, fileUploadJson, type FileUploadRow } from '#shared/views/fileUploadViews';
import type { Replay } from './timeline';
import { type CatalogueWorld, emptyWorld, evolveWorld } from './catalogueWorld';

export type ReplayedUploadRow = FileUploadRow & { readonly blob_key: string };

/** The upload, when it exists in the world (received and not deleted). */
export function liveUpload(world: CatalogueWorld, uploadId: string): LiveUpload | undefined {
  const state = world.uploads.get(uploadId);
  return state && isLiveUpload(state) ? state : undefined;
}

export function uploadRowAt(world: CatalogueWorld, uploadId: string): ReplayedUploadRow | undefined {
  const upload = liveUpload(world, uploadId);
  if (!upload) return undefined;
  const uploader = world.users.get(upload.uploaderId);
  const brain = upload.associatedBrainId === null ? undefined : world.brains.get(upload.associatedBrainId);
  const registered = uploader?.status === 'registered' ? uploader : undefined;
  const active = brain?.status === 'active' ? brain : undefined;
  return {
    id: upload.uploadId,
    name: upload.name,
    filename: upload.filename,
    date_uploaded: upload.receivedAt,
    uploader_id: upload.uploaderId,
    uploader_username: registered?.username ?? null,
    uploader_email: registered?.email ?? null,
    status: upload.status,
    processing_started: upload.claim?.startedAt ?? null,
    // Processing again clears the end (uploadsProjection); a failure clears the preview.
    processing_completed: upload.status === 'processing' ? null : upload.completedAt,
    size_bytes: upload.sizeBytes,
    associated_brain_id: upload.associatedBrainId,
    brain_name: active?.name ?? null,
    brain_readable_id: active?.readableId ?? null,
    mime_type: upload.mimeType,
    metadata: upload.metadata,
    preview_blob_key: upload.status === 'failed' ? null : upload.previewBlobKey,
    blob_key: upload.blobKey,
  };
}

/**
 * The upload's representation through its history. s3_url is the download route: a presigned URL
 * changes with every request, which is no change of the upload.
 */
export const uploadReplay = (uploadId: string, baseUrl: string): Replay<CatalogueWorld> => ({
  initial: emptyWorld,
  evolve: evolveWorld,
  represent: (world) => {
    const row = uploadRowAt(world, uploadId);
    return row && fileUploadJson(row, baseUrl, fileUploadDownloadUrl(baseUrl, row.id));
  },
});

/** The receive event of an upload's stream, when it has one. */
export const uploadReceivedIn = (events: readonly RecordedEvent[]): UploadReceived['data'] | undefined =>
  events.find((event) => event.type === 'UploadReceived')?.data as UploadReceived['data'] | undefined;

/**
 * The brain an upload's stream names as its own: the one it was received for, or the one it was
 * attached to later (UploadAttachedToBrain: the last one, since an attach to a brain that was never
 * created is taken over by the next); null when none.
 */
export function associatedBrainIn(events: readonly RecordedEvent[]): number | null {
  const attached = events.findLast((event) => event.type === 'UploadAttachedToBrain')?.data as
    UploadAttachedToBrain['data'] | undefined;
  return attached?.associatedBrainId ?? uploadReceivedIn(events)?.associatedBrainId ?? null;
}
