import type { RouteSpec } from '#shared/http/routeSpec';
import { currentUserJson, userSchemas } from '#shared/views/userViews';
import type { QueryDeps } from '#services/query-api/queryDeps';

export const meRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/auth/me/',
  operationId: 'me',
  summary: 'The current user',
  tags: ['auth'],
  auth: 'required',
  responses: {
    200: {
      description: 'id, username, email, first_name, last_name, avatar, bio, location',
      schema: userSchemas.current,
    },
  },
  async handler(ctx) {
    const user = await deps.users.get(ctx.principal!.userId);
    return { status: 200, body: currentUserJson(user, ctx.baseUrl) };
  },
});
