import { Type } from '@sinclair/typebox';
import type { RouteSpec } from '#shared/http/routeSpec';
import { SqlConditions } from '#shared/query/sqlConditions';
import { brainSchema } from '#shared/views/brainViews';
import { whereVisible } from '#shared/query/brainVisibility';
import { type QueryDeps, brainViewFor, viewerFor } from '#services/query-api/queryDeps';
import { brainReply } from './brainReply';
import { findBrain, shapeOf, shapeQueryProperty } from './brainSql';

export const brainByReadableIdRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/brains/by_readable_id/',
  operationId: 'getBrainByReadableId',
  summary: 'A brain by readable_id (shape A)',
  tags: ['brains'],
  auth: 'public',
  query: Type.Object({ readable_id: Type.String({ minLength: 1 }), shape: shapeQueryProperty }),
  responses: {
    200: { description: 'The brain', schema: brainSchema },
    400: { description: 'No readable_id' },
    404: { description: 'No brain with this readable_id' },
  },
  async handler(ctx) {
    const filter = whereVisible(new SqlConditions(), viewerFor(ctx));
    filter.where(`b.readable_id = ${filter.param(String(ctx.query.readable_id).trim().toLowerCase())}`);
    return brainReply(
      await findBrain(deps.readModels, filter),
      shapeOf(ctx.query, 'a'),
      brainViewFor(deps, ctx),
    );
  },
});
