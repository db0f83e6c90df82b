import { Type } from '@sinclair/typebox';
import type { RouteSpec } from '#shared/http/routeSpec';
import { SqlConditions } from '#shared/query/sqlConditions';
import { brainSchema } from '#shared/views/brainViews';
import { whereVisible } from '#shared/query/brainVisibility';
import { type QueryDeps, brainViewFor, viewerFor } from '#services/query-api/queryDeps';
import { brainReply } from './brainReply';
import { findBrain, shapeOf, shapeQueryProperty } from './brainSql';

export const brainByAtlasSlugRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/brains/by_atlas_slug/',
  operationId: 'getBrainByAtlasSlug',
  summary: "An atlas's reference brain, else its oldest (shape B)",
  tags: ['brains'],
  auth: 'public',
  query: Type.Object({ slug: Type.String({ minLength: 1 }), shape: shapeQueryProperty }),
  responses: {
    200: { description: 'The brain', schema: brainSchema },
    400: { description: 'No slug' },
    404: { description: 'No atlas with this slug, or it has no brains you may see' },
  },
  async handler(ctx) {
    const filter = whereVisible(new SqlConditions(), viewerFor(ctx));
    filter.where(`a.slug = ${filter.param(String(ctx.query.slug).trim().toLowerCase())}`);
    // Among those the caller may see: the reference brain if there is one; among several, and otherwise, the oldest.
    const row = await findBrain(deps.readModels, filter, 'b.is_reference DESC, b.date_uploaded, b.id');
    return brainReply(row, shapeOf(ctx.query, 'b'), brainViewFor(deps, ctx));
  },
});
