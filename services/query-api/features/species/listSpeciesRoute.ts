import { type Static, Type } from '@sinclair/typebox';
import { databaseIdOf } from '#shared/http/ids';
import type { RouteSpec } from '#shared/http/routeSpec';
import { listQueryProperties, listReply, listResponseSchema, orderBy } from '#shared/query/listResponse';
import { sqlListSource } from '#shared/query/sqlListSource';
import { SqlConditions } from '#shared/query/sqlConditions';
import { normaliseName, scientificNameKey } from '#shared/domain/naming/naming';
import { type SpeciesRow, speciesJson, speciesSchema } from '#shared/views/speciesViews';
import { type QueryDeps, viewerFor } from '#services/query-api/queryDeps';
import { SCIENTIFIC_NAME_KEY_SQL, speciesQuery } from './speciesSql';

/** The orderings, brains_count being the count the caller sees. */
const ordering = (brainsCount: string) => ({
  name: 's.name',
  id: 's.id',
  scientific_name: 'lower(s.scientific_name)',
  brains_count: brainsCount,
  atlases_count: 's.atlases_count',
});

const SpeciesQuery = Type.Object({
  ...listQueryProperties,
  category: Type.Optional(Type.String({ description: 'Category name (case-insensitive) or id.' })),
  scientific_name: Type.Optional(Type.String({ description: 'Exact scientific name, case-insensitive.' })),
});
type SpeciesQuery = Static<typeof SpeciesQuery>;

function filters(query: SpeciesQuery, filter: SqlConditions): SqlConditions {
  if (typeof query.category === 'string') {
    const byName = `c.name = ${filter.param(normaliseName(query.category))}`;
    const id = databaseIdOf(query.category.trim());
    filter.where(id === undefined ? byName : `${byName} OR c.id = ${filter.param(id)}`);
  }
  if (typeof query.scientific_name === 'string')
    filter.where(`${SCIENTIFIC_NAME_KEY_SQL} = ${filter.param(scientificNameKey(query.scientific_name))}`);
  return filter;
}

export const listSpeciesRoute = (deps: QueryDeps): RouteSpec<unknown, typeof SpeciesQuery> => ({
  method: 'get',
  path: '/api/species/',
  operationId: 'listSpecies',
  summary: 'Species, by name',
  description:
    'An array by default; {count, next, previous, results} when page or page_size is given. Each species carries at most 100 compact brains and atlases; the counts are exact (brains you may not see are neither listed nor counted). `ordering` accepts name, id, scientific_name, brains_count, atlases_count.',
  tags: ['species'],
  auth: 'public',
  query: SpeciesQuery,
  responses: { 200: { description: 'Species', schema: listResponseSchema(speciesSchema) } },
  async handler(ctx) {
    const conditions = new SqlConditions();
    const { select, from, brainsCount } = speciesQuery(conditions, viewerFor(ctx));
    const filter = filters(ctx.query, conditions);
    const order = orderBy(ctx.query.ordering, ordering(brainsCount), 's.name', 's.id');
    return listReply(
      ctx,
      sqlListSource<SpeciesRow, unknown>(
        deps.readModels,
        { select, from, conditions: filter, order: order },
        speciesJson,
      ),
    );
  },
});
