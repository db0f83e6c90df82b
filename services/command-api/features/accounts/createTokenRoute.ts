import { Type } from '@sinclair/typebox';
import { randomUUID } from 'node:crypto';
import type { RouteSpec } from '#shared/http/routeSpec';
import { handleCommand } from '#shared/commandHandling/handleCommand';
import { decideUser } from '#shared/domain/accounts/decide';
import { userDecider, userStreamName } from '#shared/domain/accounts/events';
import { generateTokenSecret, hashTokenSecret } from '#shared/auth/tokens';
import { ValidationError } from '#shared/errors/httpErrors';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { commandContext } from '#services/command-api/commandDeps';
import { requirePrincipal } from '#services/command-api/features/accounts/requirePrincipal';
import { tokenSchema } from '#shared/views/tokenViews';
import { Nullable } from '#shared/views/nullable';

const CreateTokenBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  expires_at: Type.Optional(
    Nullable(Type.String({ format: 'date-time', description: 'Optional; must be in the future.' })),
  ),
});

export const createTokenRoute = (deps: CommandDeps): RouteSpec<typeof CreateTokenBody> => ({
  method: 'post',
  path: '/api/tokens/',
  operationId: 'createToken',
  summary: 'Create a personal access token',
  description:
    'The secret (prefix "bic_pat_") is returned once, in this response; only its hash is stored. Send it as "Authorization: Bearer <token>".',
  tags: ['tokens'],
  auth: 'required',
  rateLimit: 'tokenCreate',
  body: CreateTokenBody,
  responses: {
    201: {
      description: 'The token, with its secret',
      schema: { ...tokenSchema, properties: { ...tokenSchema.properties, token: { type: 'string' } } },
    },
    400: { description: 'Missing name, or an expiry that is not in the future' },
  },
  async handler(ctx) {
    const principal = requirePrincipal(ctx);
    const name = ctx.body.name.trim();
    if (name === '') throw ValidationError.field('name', 'This field may not be blank.');
    const now = deps.clock();
    const expiresAt = ctx.body.expires_at ? new Date(ctx.body.expires_at).toISOString() : null;
    const tokenId = randomUUID();
    const secret = generateTokenSecret('personal');
    const result = await handleCommand(
      deps.store,
      userStreamName(principal.userId),
      userDecider,
      (state) =>
        decideUser(
          {
            type: 'IssueAccessToken',
            data: {
              tokenId,
              kind: 'personal',
              name,
              tokenHash: hashTokenSecret(secret),
              expiresAt,
              now: now.toISOString(),
            },
          },
          state,
        ),
      commandContext(ctx),
    );
    return {
      status: 201,
      body: {
        id: tokenId,
        name,
        token: secret,
        created_at: now.toISOString(),
        expires_at: expiresAt,
        last_used_at: null,
        is_revoked: false,
      },
      position: result.position,
    };
  },
});
