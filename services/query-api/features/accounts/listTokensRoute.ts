import { Type } from '@sinclair/typebox';
import type { RouteSpec } from '#shared/http/routeSpec';
import { listQueryProperties, listReply, orderBy } from '#shared/query/listResponse';
import type { TokenRow } from '#shared/views/tokenViews';
import { tokenJson, tokenSchema } from '#shared/views/tokenViews';
import type { QueryDeps } from '#services/query-api/queryDeps';

const ORDERING = {
  created_at: 'created_at',
  name: 'name',
  last_used_at: 'last_used_at',
  expires_at: 'expires_at',
};

export const listTokensRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/tokens/',
  operationId: 'listTokens',
  summary: 'Your personal access tokens that are not revoked, newest first',
  description: 'An array by default; {count, next, previous, results} when page or page_size is given.',
  tags: ['tokens'],
  auth: 'required',
  query: Type.Object(listQueryProperties),
  responses: {
    200: {
      description: 'Tokens (never their secrets)',
      schema: {
        oneOf: [
          { type: 'array', items: tokenSchema },
          {
            type: 'object',
            properties: {
              count: { type: 'integer' },
              next: { type: ['string', 'null'] },
              previous: { type: ['string', 'null'] },
              results: { type: 'array', items: tokenSchema },
            },
          },
        ],
      },
    },
  },
  async handler(ctx) {
    const userId = ctx.principal!.userId;
    const where = `user_id = $1 AND kind = 'personal' AND revoked_at IS NULL`;
    const order = orderBy(ctx.query.ordering, ORDERING, 'created_at DESC', 'id');
    return listReply(ctx, {
      count: async () =>
        Number(
          (
            await deps.readModels.query<{ n: string }>(
              `SELECT count(*) AS n FROM access_tokens WHERE ${where}`,
              [userId],
            )
          ).rows[0]?.n ?? 0,
        ),
      fetch: async ({ limit, offset }) =>
        (
          await deps.readModels.query<TokenRow>(
            `SELECT id, name, created_at, last_used_at, expires_at, revoked_at FROM access_tokens WHERE ${where} ORDER BY ${order} LIMIT $2 OFFSET $3`,
            [userId, limit, offset],
          )
        ).rows.map(tokenJson),
    });
  },
});
