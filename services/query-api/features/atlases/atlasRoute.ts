import type { RouteSpec } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';
import { atlasJson, atlasSchema } from '#shared/views/atlasViews';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { ATLAS_SELECT, type FlatAtlasRow, atlasRowOf } from './atlasSql';

export const atlasRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/atlases/{slug}/',
  operationId: 'getAtlas',
  summary: 'An atlas by slug',
  tags: ['atlases'],
  auth: 'public',
  responses: {
    200: { description: 'The atlas', schema: atlasSchema },
    404: { description: 'No atlas with this slug' },
  },
  async handler(ctx) {
    const { rows } = await deps.readModels.query<FlatAtlasRow>(`${ATLAS_SELECT} WHERE a.slug = $1`, [
      (ctx.params.slug ?? '').trim().toLowerCase(),
    ]);
    const row = rows[0];
    if (!row) throw new NotFoundError();
    return { status: 200, body: atlasJson(atlasRowOf(row)) };
  },
});
