import { type Static, Type } from '@sinclair/typebox';
import { databaseIdOf } from '#shared/http/ids';
import type { RouteSpec } from '#shared/http/routeSpec';
import { listQueryProperties, listReply, listResponseSchema, orderBy } from '#shared/query/listResponse';
import { sqlListSource } from '#shared/query/sqlListSource';
import { SqlConditions } from '#shared/query/sqlConditions';
import { scientificNameKey } from '#shared/domain/naming/naming';
import { atlasJson, atlasSchema } from '#shared/views/atlasViews';
import { type QueryDeps, viewerFor } from '#services/query-api/queryDeps';
import { type FlatAtlasRow, atlasQuery, atlasRowOf } from './atlasSql';

/** The orderings, brains_count being the count the caller sees. */
const ordering = (brainsCount: string) => ({
  name: 'lower(a.name)',
  id: 'a.id',
  slug: 'a.slug',
  version: 'a.version',
  brains_count: brainsCount,
});

const AtlasesQuery = Type.Object({
  ...listQueryProperties,
  species: Type.Optional(
    Type.String({ description: 'Species id, or its scientific name (case-insensitive).' }),
  ),
  is_official: Type.Optional(Type.Boolean()),
  verified: Type.Optional(Type.Boolean()),
  name: Type.Optional(Type.String({ description: 'Exact name, case-insensitive.' })),
});
type AtlasesQuery = Static<typeof AtlasesQuery>;

function filters(query: AtlasesQuery, filter: SqlConditions): SqlConditions {
  const species = typeof query.species === 'string' ? query.species.trim() : undefined;
  if (species !== undefined) {
    const id = databaseIdOf(species);
    filter.where(
      id !== undefined
        ? `a.species_id = ${filter.param(id)}`
        : `regexp_replace(lower(s.scientific_name), '[[:space:]+_-]+', ' ', 'g') = ${filter.param(scientificNameKey(species))}`,
    );
  }
  if (typeof query.is_official === 'boolean')
    filter.where(`a.is_official = ${filter.param(query.is_official)}`);
  if (typeof query.verified === 'boolean') filter.where(`a.verified = ${filter.param(query.verified)}`);
  if (typeof query.name === 'string')
    filter.where(`lower(a.name) = ${filter.param(query.name.trim().toLowerCase())}`);
  return filter;
}

export const listAtlasesRoute = (deps: QueryDeps): RouteSpec<unknown, typeof AtlasesQuery> => ({
  method: 'get',
  path: '/api/atlases/',
  operationId: 'listAtlases',
  summary: 'Atlases, by name',
  description:
    'An array by default; {count, next, previous, results} when page or page_size is given. Filters combine with AND. `ordering` accepts name, id, slug, version, brains_count (which counts only the brains you may see).',
  tags: ['atlases'],
  auth: 'public',
  query: AtlasesQuery,
  responses: { 200: { description: 'Atlases', schema: listResponseSchema(atlasSchema) } },
  async handler(ctx) {
    const conditions = new SqlConditions();
    const { select, from, brainsCount } = atlasQuery(conditions, viewerFor(ctx));
    const filter = filters(ctx.query, conditions);
    const order = orderBy(ctx.query.ordering, ordering(brainsCount), 'lower(a.name)', 'a.id');
    return listReply(
      ctx,
      sqlListSource<FlatAtlasRow, unknown>(
        deps.readModels,
        { select, from, conditions: filter, order: order },
        (row) => atlasJson(atlasRowOf(row)),
      ),
    );
  },
});
