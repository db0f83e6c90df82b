import { Type } from '@sinclair/typebox';
import type { RouteSpec } from '#shared/http/routeSpec';
import { NotFoundError, ValidationError } from '#shared/errors/httpErrors';
import { handleCommand } from '#shared/commandHandling/handleCommand';
import { decideBrain } from '#shared/domain/brains/decide';
import { type BrainState, brainDecider } from '#shared/domain/brains/events';
import { COLLABORATOR_ROLES, type CollaboratorRole } from '#shared/domain/brains/visibility';
import { collaboratorJson, collaboratorSchema } from '#shared/views/collaboratorViews';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { commandContext } from '#services/command-api/commandDeps';
import { brainCommandTarget, onKeyedBrain } from '#services/command-api/features/brains/brainIdForKey';
import { resolveUser } from './resolveUser';

export const UNKNOWN_USER = 'No user with this username or email.';

const ShareBody = Type.Object({
  user: Type.String({ minLength: 1, maxLength: 254, description: 'Username or email (case-insensitive).' }),
  role: Type.Unsafe<CollaboratorRole>({
    type: 'string',
    enum: [...COLLABORATOR_ROLES],
    description: 'viewer: reads and downloads; editor: also changes the descriptive fields.',
  }),
});

export const shareBrainRoute = (deps: CommandDeps): RouteSpec<typeof ShareBody> => ({
  method: 'post',
  path: '/api/brains/{key}/collaborators/',
  operationId: 'addBrainCollaborator',
  summary: 'Share a brain with a user, or change their role (uploader or staff)',
  description:
    'Adds the user (by username or email) as a collaborator with the role: 201. A user who already is one gets the new role: 200 (the same role again changes nothing, 200). The key is the id or the readable_id. A brain the caller may not see is 404; one they see but do not own (collaborators included) is 403.',
  tags: ['brains'],
  auth: 'required',
  body: ShareBody,
  responses: {
    200: { description: 'Already a collaborator: the role as it now is', schema: collaboratorSchema },
    201: { description: 'Added', schema: collaboratorSchema },
    400: { description: 'No such user, the uploader themselves, or an invalid role' },
    403: { description: 'Neither the uploader nor staff' },
    404: { description: 'No brain with this key, or one the caller may not see' },
  },
  async handler(ctx) {
    const { actor, key, stream } = brainCommandTarget(ctx);
    const user = await resolveUser(deps.store, ctx.body.user);
    if (!user) throw ValidationError.field('user', UNKNOWN_USER);
    let added = false;
    const result = await handleCommand(
      deps.store,
      stream,
      brainDecider,
      onKeyedBrain(key, (state: BrainState) => {
        const command = { userId: user.id, role: ctx.body.role, actor, now: deps.clock().toISOString() };
        const events = decideBrain({ type: 'ShareBrain', data: command }, state);
        added = events[0]?.type === 'BrainCollaboratorAdded';
        return events;
      }),
      commandContext(ctx),
    );
    const collaborator =
      result.state.status === 'active' ? result.state.collaborators[String(user.id)] : undefined;
    if (!collaborator) throw new NotFoundError();
    return {
      status: added ? 201 : 200,
      body: collaboratorJson(user, collaborator.role, collaborator.addedAt),
      position: result.position,
    };
  },
});
