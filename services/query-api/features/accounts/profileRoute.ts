import type { RouteSpec } from '#shared/http/routeSpec';
import { profileJson, userSchemas } from '#shared/views/userViews';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { weakEtag } from '#shared/http/etag';

export const profileSchema = {
  type: 'object',
  properties: { ...userSchemas.current.properties, group: userSchemas.group },
} as const;

export const profileRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/profile/',
  operationId: 'getProfile',
  summary: "The current user's profile",
  description:
    'group is {id: 1, name: "researchers"}, or {id: 2, name: "curators"} for staff. The weak ETag is the account\'s revision: send it as If-Match on PATCH to refuse lost updates (409).',
  tags: ['profile'],
  auth: 'required',
  responses: { 200: { description: 'The profile', schema: profileSchema } },
  async handler(ctx) {
    const user = await deps.users.get(ctx.principal!.userId);
    return { status: 200, body: profileJson(user, ctx.baseUrl), headers: { ETag: weakEtag(user.revision) } };
  },
});
