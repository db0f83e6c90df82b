import { Type } from '@sinclair/typebox';
import type { RouteSpec } from '#shared/http/routeSpec';
import { listQueryProperties, listReply, listResponseSchema, orderBy } from '#shared/query/listResponse';
import { sqlListSource } from '#shared/query/sqlListSource';
import { SqlConditions } from '#shared/query/sqlConditions';
import { normaliseName } from '#shared/domain/naming/naming';
import { type CategoryRow, categoryJson, categorySchema } from '#shared/views/categoryViews';
import { type QueryDeps, viewerFor } from '#services/query-api/queryDeps';
import { categoryQuery } from './categorySql';

/** The orderings, brains_count being the count the caller sees. */
const ordering = (brainsCount: string) => ({
  name: 'c.name',
  id: 'c.id',
  brains_count: brainsCount,
  atlases_count: 'c.atlases_count',
});

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
    'An array by default; {count, next, previous, results} when page or page_size is given. `ordering` accepts name, id, brains_count, atlases_count. brains_count counts only the brains you may see.',
  tags: ['categories'],
  auth: 'public',
  query: CategoriesQuery,
  responses: { 200: { description: 'Categories', schema: listResponseSchema(categorySchema) } },
  async handler(ctx) {
    const filter = new SqlConditions();
    const { select, from, brainsCount } = categoryQuery(filter, viewerFor(ctx));
    if (typeof ctx.query.name === 'string')
      filter.where(`c.name = ${filter.param(normaliseName(ctx.query.name))}`);
    const order = orderBy(ctx.query.ordering, ordering(brainsCount), 'c.name', 'c.id');
    return listReply(
      ctx,
      sqlListSource<CategoryRow, unknown>(
        deps.readModels,
        { select, from, conditions: filter, order: order },
        (row) => categoryJson(row, ctx.baseUrl),
      ),
    );
  },
});
