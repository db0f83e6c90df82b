import type { RouteSpec } from '#shared/http/routeSpec';
import { handleCommand } from '#shared/commandHandling/handleCommand';
import { decideUser } from '#shared/domain/accounts/decide';
import { userDecider, userStreamName } from '#shared/domain/accounts/events';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { commandContext } from '#services/command-api/commandDeps';
import { requirePrincipal } from './requirePrincipal';

export const logoutRoute = (deps: CommandDeps): RouteSpec => ({
  method: 'post',
  path: '/api/auth/logout/',
  operationId: 'logout',
  summary: 'Revoke the token used for this request',
  tags: ['auth'],
  auth: 'required',
  responses: {
    200: {
      description: 'Logged out',
      schema: { type: 'object', properties: { detail: { type: 'string' } } },
    },
  },
  async handler(ctx) {
    const principal = requirePrincipal(ctx);
    const result = await handleCommand(
      deps.store,
      userStreamName(principal.userId),
      userDecider,
      (state) =>
        decideUser(
          {
            type: 'RevokeAccessToken',
            data: {
              tokenId: principal.tokenId,
              actorUserId: principal.userId,
              reason: 'logout',
              now: deps.clock().toISOString(),
            },
          },
          state,
        ),
      commandContext(ctx),
    );
    return { status: 200, body: { detail: 'Successfully logged out.' }, position: result.position };
  },
});
