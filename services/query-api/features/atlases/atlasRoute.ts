import { Type } from '@sinclair/typebox';
import type { RouteSpec } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';
import { atlasJson, atlasSchema } from '#shared/views/atlasViews';
import { parseAsOf } from '#shared/audit/asOf';
import { asOfQueryProperty } from '#shared/audit/replay/asOfQuery';
import { catalogueAsOfReply } from '#shared/audit/replay/catalogueAsOf';
import { atlasAt } from '#shared/audit/replay/catalogueReplay';
import { SqlConditions } from '#shared/query/sqlConditions';
import { type QueryDeps, viewerFor } from '#services/query-api/queryDeps';
import { visibleCatalogueSource } from '#shared/query/visibleCatalogueSource';
import { type FlatAtlasRow, atlasQuery, atlasRowOf } from './atlasSql';

export const atlasRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/atlases/{slug}/',
  operationId: 'getAtlas',
  summary: 'An atlas by slug',
  description: 'Its brains_count counts only the brains you may see (with as_of too).',
  tags: ['atlases'],
  auth: 'public',
  query: Type.Object({ as_of: asOfQueryProperty }),
  responses: {
    200: { description: 'The atlas', schema: atlasSchema },
    400: { description: 'Malformed as_of' },
    404: { description: 'No atlas with this slug (as of as_of, when given)' },
  },
  async handler(ctx) {
    const asOf = parseAsOf(ctx.query.as_of);
    const viewer = viewerFor(ctx);
    const conditions = new SqlConditions();
    const { select } = atlasQuery(conditions, viewer);
    conditions.where(`a.slug = ${conditions.param((ctx.params.slug ?? '').trim().toLowerCase())}`);
    const { rows } = await deps.readModels.query<FlatAtlasRow>(
      `${select} ${conditions.whereSql}`,
      conditions.params(),
    );
    const row = rows[0];
    if (!row) throw new NotFoundError();
    if (asOf)
      return catalogueAsOfReply(deps.readModels, deps.store, asOf, (source, point) =>
        atlasAt(visibleCatalogueSource(source, deps, viewer), row.id, point),
      );
    return { status: 200, body: atlasJson(atlasRowOf(row)) };
  },
});
