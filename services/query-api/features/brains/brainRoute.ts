import { Type } from '@sinclair/typebox';
import type { RouteSpec } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';
import { SqlConditions } from '#shared/query/sqlConditions';
import { isNumericKey } from '#shared/domain/naming/naming';
import { brainSchema } from '#shared/views/brainViews';
import { type QueryDeps, brainViewFor } from '#services/query-api/queryDeps';
import { parseAsOf } from '#shared/audit/asOf';
import { asOfQueryProperty } from '#shared/audit/replay/asOfQuery';
import { brainAsOfReply } from '#services/query-api/features/audit/brainAsOf';
import { brainReply } from './brainReply';
import { brainIdOf, findBrain, shapeOf, shapeQueryProperty } from './brainSql';

/** `/api/brains/{key}/`: a numeric key is the id, anything else the readable_id (decisions.md). */
export function keyCondition(key: string): SqlConditions {
  const filter = new SqlConditions();
  if (!isNumericKey(key)) return filter.where(`b.readable_id = ${filter.param(key.toLowerCase())}`);
  const id = brainIdOf(key);
  if (id === undefined) throw new NotFoundError();
  return filter.where(`b.id = ${filter.param(id)}`);
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
    404: { description: 'No brain with this key (with as_of: none then, not yet created or deleted)' },
  },
  async handler(ctx) {
    const key = ctx.params.key ?? '';
    const asOf = parseAsOf(ctx.query.as_of);
    if (asOf) {
      const shape = shapeOf(ctx.query, isNumericKey(key) ? 'b' : 'a');
      return brainAsOfReply(deps.store, key, asOf, shape, brainViewFor(deps, ctx));
    }
    const row = await findBrain(deps.readModels, keyCondition(key));
    return brainReply(row, shapeOf(ctx.query, isNumericKey(key) ? 'b' : 'a'), brainViewFor(deps, ctx));
  },
});
