import type { RouteSpec } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';
import { normaliseName } from '#shared/domain/naming/naming';
import {
  CATEGORY_COLUMNS,
  type CategoryRow,
  categoryJson,
  categorySchema,
} from '#shared/views/categoryViews';
import type { QueryDeps } from '#services/query-api/queryDeps';

export const categoryRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/categories/{name}/',
  operationId: 'getCategory',
  summary: 'A category by name (case-insensitive)',
  tags: ['categories'],
  auth: 'public',
  responses: {
    200: { description: 'The category', schema: categorySchema },
    404: { description: 'No category with this name' },
  },
  async handler(ctx) {
    const { rows } = await deps.readModels.query<CategoryRow>(
      `SELECT ${CATEGORY_COLUMNS} FROM categories WHERE name = $1`,
      [normaliseName(ctx.params.name ?? '')],
    );
    const row = rows[0];
    if (!row) throw new NotFoundError();
    return { status: 200, body: categoryJson(row, ctx.baseUrl) };
  },
});
