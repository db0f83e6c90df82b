import { Type } from '@sinclair/typebox';
import type { RouteSpec } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';
import { normaliseName } from '#shared/domain/naming/naming';
import {
  CATEGORY_COLUMNS,
  type CategoryRow,
  categoryJson,
  categorySchema,
} from '#shared/views/categoryViews';
import { parseAsOf } from '#shared/audit/asOf';
import { asOfQueryProperty } from '#shared/audit/replay/asOfQuery';
import { catalogueAsOfReply } from '#shared/audit/replay/catalogueAsOf';
import { categoryAt } from '#shared/audit/replay/catalogueReplay';
import type { QueryDeps } from '#services/query-api/queryDeps';

export const categoryRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/categories/{name}/',
  operationId: 'getCategory',
  summary: 'A category by name (case-insensitive)',
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
    const { rows } = await deps.readModels.query<CategoryRow>(
      `SELECT ${CATEGORY_COLUMNS} FROM categories WHERE name = $1`,
      [normaliseName(ctx.params.name ?? '')],
    );
    const row = rows[0];
    if (!row) throw new NotFoundError();
    if (asOf)
      return catalogueAsOfReply(deps.readModels, deps.store, asOf, (source, point) =>
        categoryAt(source, row.id, point, ctx.baseUrl),
      );
    return { status: 200, body: categoryJson(row, ctx.baseUrl) };
  },
});
