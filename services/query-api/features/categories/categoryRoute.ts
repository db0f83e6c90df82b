import { Type } from '@sinclair/typebox';
import type { RouteSpec } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';
import { normaliseName } from '#shared/domain/naming/naming';
import { type CategoryRow, categoryJson, categorySchema } from '#shared/views/categoryViews';
import { parseAsOf } from '#shared/audit/asOf';
import { asOfQueryProperty } from '#shared/audit/replay/asOfQuery';
import { catalogueAsOfReply } from '#shared/audit/replay/catalogueAsOf';
import { categoryAt } from '#shared/audit/replay/catalogueReplay';
import { SqlConditions } from '#shared/query/sqlConditions';
import { type QueryDeps, viewerFor } from '#services/query-api/queryDeps';
import { visibleCatalogueSource } from '#shared/query/visibleCatalogueSource';
import { categoryQuery } from './categorySql';

export const categoryRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/categories/{name}/',
  operationId: 'getCategory',
  summary: 'A category by name (case-insensitive)',
  description: 'Its brains_count counts only the brains you may see (with as_of too).',
  tags: ['categories'],
  auth: 'public',
  query: Type.Object({ as_of: asOfQueryProperty }),
  responses: {
    200: { description: 'The category', schema: categorySchema },
    400: { description: 'Malformed as_of' },
    404: { description: 'No category with this name (as of as_of, when given)' },
  },
  async handler(ctx) {
    const asOf = parseAsOf(ctx.query.as_of);
    const viewer = viewerFor(ctx);
    const conditions = new SqlConditions();
    const { select } = categoryQuery(conditions, viewer);
    conditions.where(`c.name = ${conditions.param(normaliseName(ctx.params.name ?? ''))}`);
    const { rows } = await deps.readModels.query<CategoryRow>(
      `${select} ${conditions.whereSql}`,
      conditions.params(),
    );
    const row = rows[0];
    if (!row) throw new NotFoundError();
    if (asOf)
      return catalogueAsOfReply(deps.readModels, deps.store, asOf, (source, point) =>
        categoryAt(visibleCatalogueSource(source, deps, viewer), row.id, point, ctx.baseUrl),
      );
    return { status: 200, body: categoryJson(row, ctx.baseUrl) };
  },
});
