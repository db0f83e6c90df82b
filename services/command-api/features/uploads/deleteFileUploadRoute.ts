import type { RouteSpec } from '#shared/http/routeSpec';
import { ConflictError, NotFoundError } from '#shared/errors/httpErrors';
import { loadAggregate } from '#shared/commandHandling/handleCommand';
import { isLiveUpload, uploadDecider, uploadStreamName } from '#shared/domain/uploads/events';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { commandContext } from '#services/command-api/commandDeps';
import { requirePrincipal } from '#services/command-api/features/accounts/requirePrincipal';
import { deleteUploads } from './deleteUploads';
import { isUploadId } from '#shared/domain/uploads/uploadId';

export const deleteFileUploadRoute = (deps: CommandDeps): RouteSpec => ({
  method: 'delete',
  path: '/api/file-uploads/{id}/',
  operationId: 'deleteFileUpload',
  summary: 'Delete an upload, its stored bytes and its preview (uploader or staff)',
  description:
    "Another user's upload is 404, as if it did not exist. The file of a brain is deleted with the brain (DELETE /api/brains/{id}/): deleting it alone is 409, so no brain is left without its file.",
  tags: ['file uploads'],
  auth: 'required',
  responses: {
    204: { description: 'Deleted' },
    404: { description: 'No such upload, or not yours' },
    409: { description: 'The upload is the file of a brain: delete the brain' },
  },
  async handler(ctx) {
    const principal = requirePrincipal(ctx);
    const id = ctx.params.id ?? ''; // canonical (lowercase) already: the dispatcher's withCanonicalUuids
    if (!isUploadId(id)) throw new NotFoundError();
    const { state } = await loadAggregate(deps.store, uploadStreamName(id), uploadDecider);
    // The uploader never changes, so 404 can be answered from this read. The brain can (an attach):
    // this 409 answers early, and the delete itself is decided again on the stream (a concurrent
    // attach makes it 409 too).
    if (!isLiveUpload(state) || (state.uploaderId !== principal.userId && !principal.isStaff))
      throw new NotFoundError();
    if (state.associatedBrainId !== null)
      throw new ConflictError(
        `This upload is the file of brain ${state.associatedBrainId}: delete the brain to delete its file.`,
      );
    const actor = { userId: principal.userId, isStaff: principal.isStaff };
    const position = await deleteUploads(deps, [id], 'owner_request', actor, commandContext(ctx));
    return { status: 204, position };
  },
});
