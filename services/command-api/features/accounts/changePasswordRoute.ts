import { Type } from '@sinclair/typebox';
import type { RouteSpec } from '#shared/http/routeSpec';
import { handleCommand } from '#shared/commandHandling/handleCommand';
import { decideUser } from '#shared/domain/accounts/decide';
import { userDecider, userStreamName } from '#shared/domain/accounts/events';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { commandContext } from '#services/command-api/commandDeps';
import { passwordField } from './registerRoute';
import { requirePrincipal } from './requirePrincipal';

const ChangePasswordBody = Type.Object({
  old_password: Type.String({ minLength: 1, maxLength: 1024 }),
  new_password: passwordField,
});

export const changePasswordRoute = (deps: CommandDeps): RouteSpec<typeof ChangePasswordBody> => ({
  method: 'post',
  path: '/api/auth/password/change/',
  operationId: 'changePassword',
  summary: 'Change the password',
  description:
    'Revokes every other login token of the user; personal access tokens survive. Counts against the login rate limit (the old password can be guessed here), per client address and per user.',
  tags: ['auth'],
  auth: 'required',
  rateLimit: 'login',
  body: ChangePasswordBody,
  responses: {
    200: {
      description: 'Password updated.',
      schema: { type: 'object', properties: { detail: { type: 'string' } } },
    },
    400: { description: 'Wrong old password, or the new one breaks the rules' },
  },
  async handler(ctx) {
    const principal = requirePrincipal(ctx);
    const newPasswordHash = await deps.passwords.hash(ctx.body.new_password);
    const result = await handleCommand(
      deps.store,
      userStreamName(principal.userId),
      userDecider,
      async (state) => {
        const oldPasswordMatches =
          state.status === 'registered' &&
          (await deps.passwords.verify(state.passwordHash, ctx.body.old_password));
        return decideUser(
          {
            type: 'ChangePassword',
            data: {
              oldPasswordMatches,
              newPasswordHash,
              currentTokenId: principal.tokenId,
              now: deps.clock().toISOString(),
            },
          },
          state,
        );
      },
      commandContext(ctx),
    );
    return { status: 200, body: { detail: 'Password updated.' }, position: result.position };
  },
});
