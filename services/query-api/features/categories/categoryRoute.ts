import { normaliseName } from '#shared/domain/naming/naming';
import { type CategoryRow, categoryJson, categorySchema } from '#shared/views/categoryViews';
import { categoryAt } from '#shared/audit/replay/catalogueReplay';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { catalogueItemRoute } from '#services/query-api/catalogueItemRoute';
import { categoryQuery } from './categorySql';

export const categoryRoute = (deps: QueryDeps) =>
  catalogueItemRoute<CategoryRow>(deps, {
    path: '/api/categories/{name}/',
    operationId: 'getCategory',
    summary: 'A category by name (case-insensitive)',
    tag: 'categories',
    param: 'name',
    what: 'category',
    schema: categorySchema,
    select(conditions, viewer, name) {
      const { select } = categoryQuery(conditions, viewer);
      conditions.where(`c.name = ${conditions.param(normaliseName(name))}`);
      return `${select} ${conditions.whereSql}`;
    },
    json: (row, ctx) => categoryJson(row, ctx.baseUrl),
    at: (source, id, point, ctx) => categoryAt(source, id, point, ctx.baseUrl),
  });
