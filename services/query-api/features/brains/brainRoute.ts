import { Type } from '@sinclair/typebox';
import type { RouteSpec } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';
import { SqlConditions } from '#shared/query/sqlConditions';
import { isNumericKey } from '#shared/domain/naming/naming';
import { brainSchema } from '#shared/views/brainViews';
import { whereVisible } from '#shared/query/brainVisibility';
import type { Viewer } from '#shared/domain/brains/visibility';
import { type QueryDeps, brainViewFor, viewerFor } from '#services/query-api/queryDeps';
import { parseAsOf } from '#shared/audit/asOf';
import { asOfQueryProperty } from '#shared/audit/replay/asOfQuery';
import { brainAsOfReply } from '#services/query-api/features/audit/brainAsOf';
import { brainReply } from './brainReply';
import { brainIdOf, findBrain, shapeOf, shapeQueryProperty } from './brainSql';

/**
 * `/api/brains/{key}/`: a numeric key is the id, anything else the readable_id (decisions.md), as
 * the viewer may see it: a brain they may not see is not found, as if it did not exist.
 */
export function keyCondition(key: string, viewer: Viewer): SqlConditions {
  const filter = new SqlConditions();
  if (!isNumericKey(key)) filter.where(`b.readable_id = ${filter.param(key.toLowerCase())}`);
  else {
    const id = brainIdOf(key);
    if (id === undefined) throw new NotFoundError();
    filter.where(`b.id = ${filter.param(id)}`);
  }
  return whereVisible(filter, viewer);
}

export const brainRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/brains/{key}/',
  operationId: 'getBrain',
  summary: 'A brain by id (shape B) or readable_id (shape A)',
  description:
    'A numeric key is the id and answers shape B; any other key is the readable_id and answers shape A. `shape` overrides. The weak ETag is for If-Match on PUT, PATCH and DELETE. With `as_of`, the brain as it was then, computed by replay (X-As-Of-Position names the newest event it stands on; no ETag).',
  tags: ['brains'],
  auth: 'public',
  query: Type.Object({ shape: shapeQueryProperty, as_of: asOfQueryProperty }),
  responses: {
    200: { description: 'The brain', schema: brainSchema },
    400: { description: 'as_of is neither an ISO time nor an event position' },
    404: {
      description:
        'No brain with this key that you may see (with as_of: none then, not yet created or deleted, or one you may not see now)',
    },
  },
  async handler(ctx) {
    const key = ctx.params.key ?? '';
    const asOf = parseAsOf(ctx.query.as_of);
    if (asOf) {
      const shape = shapeOf(ctx.query, isNumericKey(key) ? 'b' : 'a');
      return brainAsOfReply(deps.store, key, asOf, shape, brainViewFor(deps, ctx), viewerFor(ctx));
    }
    const row = await findBrain(deps.readModels, keyCondition(key, viewerFor(ctx)));
    return brainReply(row, shapeOf(ctx.query, isNumericKey(key) ? 'b' : 'a'), brainViewFor(deps, ctx));
  },
});
