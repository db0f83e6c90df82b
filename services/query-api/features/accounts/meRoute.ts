import type { RouteSpec } from '#shared/http/routeSpec';
import { currentUserJson, userSchemas } from '#shared/views/userViews';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { Type } from '@sinclair/typebox';
import { parseAsOf } from '#shared/audit/asOf';
import { asOfQueryProperty } from '#shared/audit/replay/asOfQuery';
import { meAsOfReply } from '#services/query-api/features/audit/meAsOf';

export const meRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/auth/me/',
  operationId: 'me',
  summary: 'The current user',
  tags: ['auth'],
  description:
    'With `as_of`, your account as it was then, computed by replay (X-As-Of-Position names the newest event it stands on).',
  auth: 'required',
  query: Type.Object({ as_of: asOfQueryProperty }),
  responses: {
    200: {
      description: 'id, username, email, first_name, last_name, avatar, bio, location',
      schema: userSchemas.current,
    },
    400: { description: 'as_of is neither an ISO time nor an event position' },
    404: { description: 'With as_of: the account did not exist then' },
  },
  async handler(ctx) {
    const asOf = parseAsOf(ctx.query.as_of);
    if (asOf) return meAsOfReply(deps.store, ctx.principal!.userId, asOf, ctx.baseUrl);
    const user = await deps.users.get(ctx.principal!.userId);
    return { status: 200, body: currentUserJson(user, ctx.baseUrl) };
  },
});
