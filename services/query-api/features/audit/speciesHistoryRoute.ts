import type { RouteSpec } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';
import { scientificNameKey } from '#shared/domain/naming/naming';
import { speciesStreamName } from '#shared/domain/species/events';
import { speciesAt } from '#shared/audit/replay/catalogueReplay';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { SCIENTIFIC_NAME_KEY_SQL } from '#services/query-api/features/species/speciesSql';
import { historyQuery, historyResponse } from './historyReply';
import { catalogueHistoryReply, requireStaff } from './catalogueHistory';

export const speciesHistoryRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/species/{scientific_name}/history/',
  operationId: 'getSpeciesHistory',
  summary: "A species' history: its events, oldest first, with the fields each one changed",
  description:
    'Staff only. The scientific name matches as on the detail route (case-insensitive; words separated by ' +
    '%20, "+", "_" or "-"). `changes` compares the representation of GET /api/species/{scientific_name}/ ' +
    '(counts and compact brains and atlases included) right before and right after each event. An array; {count, next, previous, results} with page or page_size.',
  tags: ['audit', 'species'],
  auth: 'required',
  query: historyQuery,
  responses: {
    200: historyResponse('the species'),
    401: { description: 'No valid token' },
    403: { description: 'Not staff' },
    404: { description: 'No species with this scientific name' },
  },
  async handler(ctx) {
    requireStaff(ctx);
    const { rows } = await deps.readModels.query<{ id: number }>(
      `SELECT s.id FROM species s WHERE ${SCIENTIFIC_NAME_KEY_SQL} = $1`,
      [scientificNameKey(ctx.params.scientific_name ?? '')],
    );
    const id = rows[0]?.id;
    if (id === undefined) throw new NotFoundError();
    return catalogueHistoryReply(
      ctx,
      deps,
      { type: 'species', id, streamName: speciesStreamName(id) },
      (source, point) => speciesAt(source, id, point),
    );
  },
});
