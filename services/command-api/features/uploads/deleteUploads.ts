import type { CommandContext } from '#shared/commandHandling/commandContext';
import { handleCommand, loadAggregate } from '#shared/commandHandling/handleCommand';
import { type GlobalPosition, afterCommit } from '#shared/eventStore/eventStore';
import type { Actor } from '#shared/domain/actor';
import { decideUpload } from '#shared/domain/uploads/decide';
import {
  type UploadDeleted,
  type UploadState,
  isLiveUpload,
  uploadDecider,
  uploadPreviewKey,
  uploadStreamName,
} from '#shared/domain/uploads/events';
import type { CommandDeps } from '#services/command-api/commandDeps';

/**
 * Deletes upload records and, once that is committed, their stored bytes and preview (whatever the
 * processing status: a preview stored by a processor still working is deleted too); resolves with the position
 * of the last record deleted (undefined when none was left to delete) (a rolled-back delete must
 * still find its file). A blob that cannot be deleted is logged: the record is gone either way.
 */
export async function deleteUploads(
  deps: CommandDeps,
  uploadIds: readonly string[],
  reason: UploadDeleted['data']['reason'],
  actor: Actor,
  cmd: CommandContext,
): Promise<GlobalPosition | undefined> {
  let last: GlobalPosition | undefined;
  for (const uploadId of uploadIds) {
    const stream = uploadStreamName(uploadId);
    const { state } = await loadAggregate(deps.store, stream, uploadDecider);
    if (!isLiveUpload(state)) continue;
    const result = await handleCommand(
      deps.store,
      stream,
      uploadDecider,
      (current: UploadState) =>
        decideUpload(
          { type: 'DeleteUpload', data: { reason, actor, now: deps.clock().toISOString() } },
          current,
        ),
      cmd,
    );
    last = result.position ?? last;
    for (const key of [state.blobKey, uploadPreviewKey(uploadId)])
      await afterCommit(deps.store, () =>
        deps.blobs.delete(key).catch((error: unknown) => {
          deps.logger.error('could not delete the stored bytes of a deleted upload', {
            upload_id: uploadId,
            blob_key: key,
            error,
          });
        }),
      );
  }
  return last;
}
