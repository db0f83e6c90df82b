import type { RouteSpec } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';
import { type AtlasCreated, atlasStreamName } from '#shared/domain/atlases/events';
import { atlasAt } from '#shared/audit/replay/catalogueReplay';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { historyQuery, historyResponse } from './historyReply';
import { catalogueHistoryReply, requireStaff } from './catalogueHistory';

export const atlasHistoryRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/atlases/{slug}/history/',
  operationId: 'getAtlasHistory',
  summary: "An atlas's history: its events, oldest first, with the fields each one changed",
  description:
    'Staff and the user who created the atlas. `changes` compares the representation of ' +
    'GET /api/atlases/{slug}/ (brains_count included) right before and right after each event. An array; {count, next, previous, results} with page or page_size.',
  tags: ['audit', 'atlases'],
  auth: 'required',
  query: historyQuery,
  responses: {
    200: historyResponse('the atlas'),
    401: { description: 'No valid token' },
    403: { description: 'Neither staff nor the creator of the atlas' },
    404: { description: 'No atlas with this slug' },
  },
  async handler(ctx) {
    requireStaff(ctx, true);
    const { rows } = await deps.readModels.query<{ id: number }>('SELECT id FROM atlases WHERE slug = $1', [
      (ctx.params.slug ?? '').trim().toLowerCase(),
    ]);
    const id = rows[0]?.id;
    if (id === undefined) throw new NotFoundError();
    const streamName = atlasStreamName(id);
    if (!ctx.principal?.isStaff) {
      const [first] = await deps.store.readStream(streamName, { maxCount: 1 });
      const creator =
        first?.type === 'AtlasCreated' ? (first.data as AtlasCreated['data']).createdBy : undefined;
      requireStaff(ctx, creator === ctx.principal?.userId);
    }
    return catalogueHistoryReply(ctx, deps, { type: 'atlas', id, streamName }, (source, point) =>
      atlasAt(source, id, point),
    );
  },
});
