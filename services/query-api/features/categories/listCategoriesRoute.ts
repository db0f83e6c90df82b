import { Type } from '@sinclair/typebox';
import type { RouteSpec } from '#shared/http/routeSpec';
import { listQueryProperties, listReply, listResponseSchema, orderBy } from '#shared/query/listResponse';
import { sqlListSource } from '#shared/query/sqlListSource';
import { SqlConditions } from '#shared/query/sqlConditions';
import { normaliseName } from '#shared/domain/naming/naming';
import {
  CATEGORY_COLUMNS,
  type CategoryRow,
  categoryJson,
  categorySchema,
} from '#shared/views/categoryViews';
import type { QueryDeps } from '#services/query-api/queryDeps';

const ORDERING = { name: 'name', id: 'id', brains_count: 'brains_count', atlases_count: 'atlases_count' };

const CategoriesQuery = Type.Object({
  ...listQueryProperties,
  name: Type.Optional(Type.String({ description: 'Exact name, case-insensitive.' })),
});

export const listCategoriesRoute = (deps: QueryDeps): RouteSpec<unknown, typeof CategoriesQuery> => ({
  method: 'get',
  path: '/api/categories/',
  operationId: 'listCategories',
  summary: 'Categories, by name',
  description:
    'An array by default; {count, next, previous, results} when page or page_size is given. `ordering` accepts name, id, brains_count, atlases_count.',
  tags: ['categories'],
  auth: 'public',
  query: CategoriesQuery,
  responses: { 200: { description: 'Categories', schema: listResponseSchema(categorySchema) } },
  async handler(ctx) {
    const filter = new SqlConditions();
    if (typeof ctx.query.name === 'string')
      filter.where(`name = ${filter.param(normaliseName(ctx.query.name))}`);
    const order = orderBy(ctx.query.ordering, ORDERING, 'name', 'id');
    return listReply(
      ctx,
      sqlListSource<CategoryRow, unknown>(
        deps.readModels,
        {
          select: `SELECT ${CATEGORY_COLUMNS} FROM categories`,
          from: 'FROM categories',
          conditions: filter,
          order: order,
        },
        (row) => categoryJson(row, ctx.baseUrl),
      ),
    );
  },
});
