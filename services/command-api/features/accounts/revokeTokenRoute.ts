import type { RouteSpec } from '#shared/http/routeSpec';
import { handleCommand } from '#shared/commandHandling/handleCommand';
import { decideUser } from '#shared/domain/accounts/decide';
import { userDecider, userStreamName } from '#shared/domain/accounts/events';
import { NotFoundError } from '#shared/errors/httpErrors';
import { canonicalUuid } from '#shared/http/ids';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { commandContext } from '#services/command-api/commandDeps';
import { requirePrincipal } from '#services/command-api/features/accounts/requirePrincipal';

export const revokeTokenRoute = (deps: CommandDeps): RouteSpec => ({
  method: 'delete',
  path: '/api/tokens/{token_id}/',
  operationId: 'revokeToken',
  summary: 'Revoke a personal access token',
  description:
    "Idempotent for your own tokens (204 again). Another user's token: 403. The token fails authentication at once.",
  tags: ['tokens'],
  auth: 'required',
  responses: {
    204: { description: 'Revoked' },
    403: { description: 'Not your token' },
    404: { description: 'No such token' },
  },
  async handler(ctx) {
    const principal = requirePrincipal(ctx);
    // The dispatcher has put the id in canonical form: the decider's token map is keyed by it.
    const tokenId = canonicalUuid(ctx.params.token_id ?? '');
    if (tokenId === undefined) throw new NotFoundError();
    // Who owns the token is a lookup; whether it may be revoked is decided on the owner's stream.
    const { rows } = await deps.readModels.query<{ user_id: number }>(
      'SELECT user_id FROM access_tokens WHERE id = $1',
      [tokenId],
    );
    const owner = rows[0]?.user_id;
    if (owner === undefined) throw new NotFoundError();
    const result = await handleCommand(
      deps.store,
      userStreamName(owner),
      userDecider,
      (state) =>
        decideUser(
          {
            type: 'RevokeAccessToken',
            data: {
              tokenId,
              actorUserId: principal.userId,
              reason: 'revoked',
              now: deps.clock().toISOString(),
            },
          },
          state,
        ),
      commandContext(ctx),
    );
    return { status: 204, position: result.position };
  },
});
