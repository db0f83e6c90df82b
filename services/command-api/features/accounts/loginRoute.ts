import { Type } from '@sinclair/typebox';
import { randomUUID } from 'node:crypto';
import type { RouteSpec } from '#shared/http/routeSpec';
import { ValidationError } from '#shared/errors/httpErrors';
import { handleCommand } from '#shared/commandHandling/handleCommand';
import { findReservationOwner } from '#shared/commandHandling/reserveValue';
import { decideUser, INVALID_CREDENTIALS } from '#shared/domain/accounts/decide';
import { userDecider } from '#shared/domain/accounts/events';
import { generateTokenSecret, hashTokenSecret } from '#shared/auth/tokens';
import { loginUserJson } from '#shared/views/userViews';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { commandContext } from '#services/command-api/commandDeps';
import { userRecordFromState } from './userRecord';

const LoginBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 254 }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
});

export const loginRoute = (deps: CommandDeps): RouteSpec<typeof LoginBody> => ({
  method: 'post',
  path: '/api/auth/login/',
  operationId: 'login',
  summary: 'Log in with email and password',
  description: `Returns a login token (send it as "Authorization: Token <token>"), valid ${Math.round(deps.loginTokenTtlMs / 86_400_000)} days. The email is matched case-insensitively.`,
  tags: ['auth'],
  auth: 'public',
  rateLimit: 'login',
  body: LoginBody,
  responses: {
    200: {
      description: 'A token and the user',
      schema: { type: 'object', properties: { token: { type: 'string' }, user: { type: 'object' } } },
    },
    400: { description: 'Unable to log in with provided credentials.' },
  },
  async handler(ctx) {
    const owner = await findReservationOwner(deps.store, 'email', ctx.body.email);
    if (!owner) {
      // Same cost as a real check, so response time does not reveal which emails have accounts.
      await deps.passwords.hash(ctx.body.password);
      throw ValidationError.field('non_field_errors', INVALID_CREDENTIALS);
    }
    const secret = generateTokenSecret('login');
    const now = deps.clock();
    const result = await handleCommand(
      deps.store,
      owner,
      userDecider,
      async (state) => {
        const passwordMatches =
          state.status === 'registered' &&
          (await deps.passwords.verify(state.passwordHash, ctx.body.password));
        return decideUser(
          {
            type: 'IssueAccessToken',
            data: {
              tokenId: randomUUID(),
              kind: 'login',
              name: 'login',
              tokenHash: hashTokenSecret(secret),
              expiresAt: new Date(now.getTime() + deps.loginTokenTtlMs).toISOString(),
              passwordMatches,
              now: now.toISOString(),
            },
          },
          state,
        );
      },
      commandContext(ctx),
    );
    if (result.state.status !== 'registered')
      throw ValidationError.field('non_field_errors', INVALID_CREDENTIALS);
    return {
      status: 200,
      body: { token: secret, user: loginUserJson(userRecordFromState(result.state), ctx.baseUrl) },
      position: result.position,
    };
  },
});
