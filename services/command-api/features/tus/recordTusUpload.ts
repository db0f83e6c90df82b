import type { CommandContext } from '#shared/commandHandling/commandContext';
import { handleCommand } from '#shared/commandHandling/handleCommand';
import type { Actor } from '#shared/domain/actor';
import { decideUpload } from '#shared/domain/uploads/decide';
import {
  type UploadReceivedData,
  type UploadState,
  uploadDecider,
  uploadStreamName,
} from '#shared/domain/uploads/events';
import type { StoredFile } from '#shared/multipart/parseMultipart';
import type { CommandDeps } from '#services/command-api/commandDeps';
import type { RecordedUpload } from '#services/command-api/features/uploads/recordUpload';

/**
 * Records a finished tus upload as recordUpload records a multipart one (the same ReceiveUpload
 * command, event and lifecycle), under the id the tus upload already had: its URL named it.
 */
export async function recordTusUpload(
  deps: CommandDeps,
  uploadId: string,
  file: StoredFile,
  name: string,
  actor: Actor,
  cmd: CommandContext,
  now: string,
): Promise<RecordedUpload> {
  const data: UploadReceivedData = {
    uploadId,
    name,
    filename: file.filename,
    sizeBytes: file.size,
    sha256: file.sha256,
    mimeType: file.mimeType,
    blobKey: file.key,
    uploaderId: actor.userId,
    associatedBrainId: null,
    receivedAt: now,
  };
  const result = await handleCommand(
    deps.store,
    uploadStreamName(uploadId),
    uploadDecider,
    (state: UploadState) => decideUpload({ type: 'ReceiveUpload', data }, state),
    cmd,
  );
  return { data, position: result.position };
}
