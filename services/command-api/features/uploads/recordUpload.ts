import { randomUUID } from 'node:crypto';
import type { CommandContext } from '#shared/commandHandling/commandContext';
import { handleCommand } from '#shared/commandHandling/handleCommand';
import type { GlobalPosition } from '#shared/eventStore/eventStore';
import type { Actor } from '#shared/domain/actor';
import { decideUpload } from '#shared/domain/uploads/decide';
import {
  type UploadReceivedData,
  type UploadState,
  uploadDecider,
  uploadStreamName,
} from '#shared/domain/uploads/events';
import type { BidsSidecar } from '#shared/domain/uploads/sidecar';
import type { StoredFile } from '#shared/multipart/parseMultipart';
import type { CommandDeps } from '#services/command-api/commandDeps';

export interface RecordedUpload {
  readonly data: UploadReceivedData;
  readonly position: GlobalPosition | undefined;
}

/** What an upload of a stored file is recorded with. */
export interface UploadToRecord {
  readonly name: string;
  readonly associatedBrainId: number | null;
  readonly sidecar?: BidsSidecar | null;
  /** A new id unless given. */
  readonly uploadId?: string;
}

/** The UploadReceived of a file already durable in the BlobStore (a new upload id unless given). */
export function uploadReceivedData(
  file: StoredFile,
  upload: UploadToRecord,
  actor: Actor,
  now: string,
): UploadReceivedData {
  return {
    uploadId: upload.uploadId ?? randomUUID(),
    name: upload.name,
    filename: file.filename,
    sizeBytes: file.size,
    sha256: file.sha256,
    mimeType: file.mimeType,
    blobKey: file.key,
    uploaderId: actor.userId,
    associatedBrainId: upload.associatedBrainId,
    receivedAt: now,
    ...(upload.sidecar ? { sidecar: upload.sidecar } : {}),
  };
}

/**
 * Records a file already durable in the BlobStore as an upload in status `uploaded` (the processor
 * picks it up from the event). The one path for standalone uploads, brain files and finished tus
 * uploads (which bring the id their URL already named).
 */
export async function recordUpload(
  deps: CommandDeps,
  file: StoredFile,
  upload: UploadToRecord,
  actor: Actor,
  cmd: CommandContext,
  now: string,
): Promise<RecordedUpload> {
  const data = uploadReceivedData(file, upload, actor, now);
  const result = await handleCommand(
    deps.store,
    uploadStreamName(data.uploadId),
    uploadDecider,
    (state: UploadState) => decideUpload({ type: 'ReceiveUpload', data }, state),
    cmd,
    // A fresh id's stream cannot exist: no read before the append.
    { newStream: upload.uploadId === undefined },
  );
  return { data, position: result.position };
}
