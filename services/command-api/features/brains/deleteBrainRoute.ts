import type { RouteSpec } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/domain/domainErrors';
import { handleCommand } from '#shared/commandHandling/handleCommand';
import { decideBrain } from '#shared/domain/brains/decide';
import {
  type BrainDeleted,
  type BrainEvent,
  type BrainState,
  brainDecider,
} from '#shared/domain/brains/events';
import type { CommandContext } from '#shared/commandHandling/commandContext';
import type { Actor } from '#shared/domain/actor';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { commandContext } from '#services/command-api/commandDeps';
import { deleteUploads } from '#services/command-api/features/uploads/deleteUploads';
import { brainCommandTarget, ifMatchOfVisibleBrain, onKeyedBrain } from './brainIdForKey';

/**
 * A brain deleted earlier whose uploads were not all removed (the request failed in between): a
 * repeated DELETE, still a 404, removes the rest. Its own failure is logged; the 404 stands.
 */
async function finishEarlierDelete(
  deps: CommandDeps,
  stream: string,
  actor: Actor,
  cmd: CommandContext,
): Promise<void> {
  try {
    const events = (await deps.store.readStream(stream)) as unknown as readonly BrainEvent[];
    const deleted = events.find((e): e is BrainDeleted => e.type === 'BrainDeleted');
    if (deleted) await deleteUploads(deps, deleted.data.fileUploadIds, 'brain_deleted', actor, cmd);
  } catch (failure) {
    deps.logger.error('could not remove the uploads of a deleted brain', { stream, error: failure });
  }
}

export const deleteBrainRoute = (deps: CommandDeps): RouteSpec => ({
  method: 'delete',
  path: '/api/brains/{key}/',
  operationId: 'deleteBrain',
  summary: 'Delete a brain and its file uploads (uploader or staff)',
  description:
    'Removes the brain, the records of its file uploads and their stored bytes. With If-Match (the ETag of GET), a change in between is 409.',
  tags: ['brains'],
  auth: 'required',
  responses: {
    204: { description: 'Deleted' },
    403: { description: 'Not the uploader nor staff (a collaborator, whatever their role, included)' },
    404: { description: 'No brain with this key, or one the caller may not see' },
    409: { description: 'If-Match is stale' },
  },
  async handler(ctx) {
    const target = brainCommandTarget(ctx);
    const { actor, key, stream } = target;
    const cmd = commandContext(ctx);
    const expectedRevision = await ifMatchOfVisibleBrain(ctx, deps.store, target, deps.clock());
    const result = await handleCommand(
      deps.store,
      stream,
      brainDecider,
      onKeyedBrain(key, (state: BrainState) =>
        decideBrain({ type: 'DeleteBrain', data: { actor, now: deps.clock().toISOString() } }, state),
      ),
      cmd,
      { expectedRevision },
    ).catch(async (error: unknown) => {
      if (error instanceof NotFoundError) await finishEarlierDelete(deps, stream, actor, cmd);
      throw error;
    });
    const deleted = result.events[0] as BrainDeleted | undefined;
    if (!deleted) throw new NotFoundError();
    const uploadsGone = await deleteUploads(deps, deleted.data.fileUploadIds, 'brain_deleted', actor, cmd);
    // Answer once the read models show the uploads gone too, not only the brain.
    return { status: 204, position: uploadsGone ?? result.position };
  },
});
