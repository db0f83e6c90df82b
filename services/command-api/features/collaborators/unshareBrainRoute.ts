import type { RouteSpec } from '#shared/http/routeSpec';
import { handleCommand } from '#shared/commandHandling/handleCommand';
import { decideBrain } from '#shared/domain/brains/decide';
import { type BrainState, brainDecider } from '#shared/domain/brains/events';
import { databaseIdOf } from '#shared/http/ids';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { commandContext } from '#services/command-api/commandDeps';
import { brainCommandTarget, onKeyedBrain } from '#services/command-api/features/brains/brainIdForKey';

export const unshareBrainRoute = (deps: CommandDeps): RouteSpec => ({
  method: 'delete',
  path: '/api/brains/{key}/collaborators/{user_id}/',
  operationId: 'removeBrainCollaborator',
  summary: "Take a user's access to a brain away (uploader or staff)",
  description:
    'The user id is the one the collaborator list shows. A user who is not a collaborator is 404, as is a brain the caller may not see; one they see but do not own is 403.',
  tags: ['brains'],
  auth: 'required',
  responses: {
    204: { description: 'Removed' },
    403: { description: 'Neither the uploader nor staff' },
    404: { description: 'No brain with this key (or not visible to the caller), or not a collaborator' },
  },
  async handler(ctx) {
    const { actor, key, stream } = brainCommandTarget(ctx);
    const userId = databaseIdOf(ctx.params.user_id ?? '');
    const result = await handleCommand(
      deps.store,
      stream,
      brainDecider,
      onKeyedBrain(key, (state: BrainState) => {
        const now = deps.clock().toISOString();
        // An id that cannot be a user is still decided, so that the brain's 404 and 403 come first.
        return decideBrain({ type: 'UnshareBrain', data: { userId: userId ?? 0, actor, now } }, state);
      }),
      commandContext(ctx),
    );
    return { status: 204, position: result.position };
  },
});
