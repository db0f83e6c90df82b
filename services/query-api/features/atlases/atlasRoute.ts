import { atlasJson, atlasSchema } from '#shared/views/atlasViews';
import { atlasAt } from '#shared/audit/replay/catalogueReplay';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { catalogueItemRoute } from '#services/query-api/catalogueItemRoute';
import { type FlatAtlasRow, atlasQuery, atlasRowOf } from './atlasSql';

export const atlasRoute = (deps: QueryDeps) =>
  catalogueItemRoute<FlatAtlasRow>(deps, {
    path: '/api/atlases/{slug}/',
    operationId: 'getAtlas',
    summary: 'An atlas by slug',
    tag: 'atlases',
    param: 'slug',
    what: 'atlas',
    schema: atlasSchema,
    select(conditions, viewer, slug) {
      const { select } = atlasQuery(conditions, viewer);
      conditions.where(`a.slug = ${conditions.param(slug.trim().toLowerCase())}`);
      return `${select} ${conditions.whereSql}`;
    },
    json: (row) => atlasJson(atlasRowOf(row)),
    at: (source, id, point) => atlasAt(source, id, point),
  });
