import type { RouteSpec } from '../../../../shared/http/routeSpec';
import {
  listQueryProperties,
  listReply,
  listResponseSchema,
  orderBy,
} from '../../../../shared/query/listResponse';
import { SqlConditions } from '../../../../shared/query/sqlConditions';
import { normaliseName } from '../../../../shared/domain/naming/naming';
import {
  CATEGORY_COLUMNS,
  type CategoryRow,
  categoryJson,
  categorySchema,
} from '../../../../shared/views/categoryViews';
import type { QueryDeps } from '../../queryDeps';

const ORDERING = { name: 'name', id: 'id', brains_count: 'brains_count', atlases_count: 'atlases_count' };

export const listCategoriesRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/categories/',
  operationId: 'listCategories',
  summary: 'Categories, by name',
  description:
    'An array by default; {count, next, previous, results} when page or page_size is given. `ordering` accepts name, id, brains_count, atlases_count.',
  tags: ['categories'],
  auth: 'public',
  query: {
    type: 'object',
    properties: {
      ...listQueryProperties,
      name: { type: 'string', description: 'Exact name, case-insensitive.' },
    },
  },
  responses: { 200: { description: 'Categories', schema: listResponseSchema(categorySchema) } },
  async handler(ctx) {
    const filter = new SqlConditions();
    if (typeof ctx.query.name === 'string')
      filter.where(`name = ${filter.param(normaliseName(ctx.query.name))}`);
    const order = orderBy(ctx.query.ordering, ORDERING, 'name', 'id');
    return listReply(ctx, {
      count: async () =>
        Number(
          (
            await deps.readModels.query<{ n: string }>(
              `SELECT count(*) AS n FROM categories ${filter.whereSql}`,
              filter.params(),
            )
          ).rows[0]?.n ?? 0,
        ),
      fetch: async ({ limit, offset }) =>
        (
          await deps.readModels.query<CategoryRow>(
            `SELECT ${CATEGORY_COLUMNS} FROM categories ${filter.whereSql}
             ORDER BY ${order} LIMIT ${filter.extra(0)} OFFSET ${filter.extra(1)}`,
            filter.params(limit, offset),
          )
        ).rows.map((row) => categoryJson(row, ctx.baseUrl)),
    });
  },
});
