import { Type } from '@sinclair/typebox';
import type { RouteSpec } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';
import { scientificNameKey } from '#shared/domain/naming/naming';
import { type SpeciesRow, speciesJson, speciesSchema } from '#shared/views/speciesViews';
import { parseAsOf } from '#shared/audit/asOf';
import { asOfQueryProperty } from '#shared/audit/replay/asOfQuery';
import { catalogueAsOfReply } from '#shared/audit/replay/catalogueAsOf';
import { speciesAt } from '#shared/audit/replay/catalogueReplay';
import { SqlConditions } from '#shared/query/sqlConditions';
import { type QueryDeps, viewerFor } from '#services/query-api/queryDeps';
import { visibleCatalogueSource } from '#shared/query/visibleCatalogueSource';
import { SCIENTIFIC_NAME_KEY_SQL, speciesQuery } from './speciesSql';

export const speciesRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/species/{scientific_name}/',
  operationId: 'getSpecies',
  summary: 'A species by scientific name',
  description:
    'Case-insensitive; the words may be separated by %20, "+", "_" or "-" (e.g. mus-musculus). Brains you may not see are neither listed nor counted (with as_of too).',
  tags: ['species'],
  auth: 'public',
  query: Type.Object({ as_of: asOfQueryProperty }),
  responses: {
    200: { description: 'The species', schema: speciesSchema },
    400: { description: 'Malformed as_of' },
    404: { description: 'No species with this scientific name (as of as_of, when given)' },
  },
  async handler(ctx) {
    const asOf = parseAsOf(ctx.query.as_of);
    const viewer = viewerFor(ctx);
    const conditions = new SqlConditions();
    const { select } = speciesQuery(conditions, viewer);
    conditions.where(
      `${SCIENTIFIC_NAME_KEY_SQL} = ${conditions.param(scientificNameKey(ctx.params.scientific_name ?? ''))}`,
    );
    const { rows } = await deps.readModels.query<SpeciesRow>(
      `${select} ${conditions.whereSql}`,
      conditions.params(),
    );
    const row = rows[0];
    if (!row) throw new NotFoundError();
    if (asOf)
      return catalogueAsOfReply(deps.readModels, deps.store, asOf, (source, point) =>
        speciesAt(visibleCatalogueSource(source, deps, viewer), row.id, point),
      );
    return { status: 200, body: speciesJson(row) };
  },
});
