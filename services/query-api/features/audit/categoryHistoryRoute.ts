import type { RouteSpec } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';
import { normaliseName } from '#shared/domain/naming/naming';
import { categoryStreamName } from '#shared/domain/categories/events';
import { categoryAt } from '#shared/audit/replay/catalogueReplay';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { historyQuery, historyResponse } from './historyReply';
import { catalogueHistoryReply, requireStaff } from './catalogueHistory';

export const categoryHistoryRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/categories/{name}/history/',
  operationId: 'getCategoryHistory',
  summary: "A category's history: its events, oldest first, with the fields each one changed",
  description:
    'Staff only. The name matches case-insensitively, as on the detail route. `changes` compares the ' +
    'representation of GET /api/categories/{name}/ (counts included) right before and right after each event. An array; {count, next, previous, results} with page or page_size.',
  tags: ['audit', 'categories'],
  auth: 'required',
  query: historyQuery,
  responses: {
    200: historyResponse('the category'),
    401: { description: 'No valid token' },
    403: { description: 'Not staff' },
    404: { description: 'No category with this name' },
  },
  async handler(ctx) {
    requireStaff(ctx);
    const { rows } = await deps.readModels.query<{ id: number }>(
      'SELECT id FROM categories WHERE name = $1',
      [normaliseName(ctx.params.name ?? '')],
    );
    const id = rows[0]?.id;
    if (id === undefined) throw new NotFoundError();
    return catalogueHistoryReply(
      ctx,
      deps,
      { type: 'category', id, streamName: categoryStreamName(id) },
      (source, point) => categoryAt(source, id, point, ctx.baseUrl),
    );
  },
});
