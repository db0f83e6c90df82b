/**
 * GET /api/brains/{key}/history/ (decisions.md "Audit", History): every audited event of the brain
 * and of its file uploads (the file it was created with, uploads attached to it later, and their
 * processing), oldest first, each with the changes it made to the brain's shape B, by replay. Staff
 * and the brain's uploader may read it, also after the brain was deleted; anyone who may not see
 * the brain now (by the state it was deleted in, if it was) gets 404, as if it had never existed.
 */
import type { Pool } from 'pg';
import type { RecordedEvent } from '#shared/eventStore/eventStore';
import type { RouteSpec } from '#shared/http/routeSpec';
import { NotFoundError, PermissionDeniedError } from '#shared/errors/httpErrors';
import { uploadStreamName } from '#shared/domain/uploads/events';
import { mergeByPosition, replayTimeline } from '#shared/audit/replay/timeline';
import { brainCreatedIn, brainShapeBReplay } from '#shared/audit/replay/brainReplay';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { historyQuery, historyReply, historyResponse, historyRows } from './historyReply';
import { readBrainStream } from './brainAsOf';
import { mayNowSee } from '#shared/query/brainVisibility';
import { viewerOf } from '#shared/domain/brains/visibility';

/** Ids of the uploads whose events named the brain (its file, and uploads attached to it). */
async function brainUploadIds(pool: Pool, brainId: number): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    `SELECT DISTINCT e.resource_id AS id
       FROM audit_references r JOIN audit_events e ON e.seq = r.seq
      WHERE r.ref = $1 AND e.resource_type = 'file_upload'`,
    [`brain:${brainId}`],
  );
  return rows.map((row) => row.id);
}

export const brainHistoryRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/brains/{key}/history/',
  operationId: 'getBrainHistory',
  summary: 'What happened to a brain, event by event, with the fields each event changed',
  description:
    "The brain's events and those of its file uploads (processing included), oldest first; `changes` are {field: [before, after]} of shape B, computed by replay. The key is the id or the readable_id; still answered after the brain was deleted. Staff and the brain's uploader only. An array; {count, next, previous, results} with page or page_size.",
  tags: ['audit', 'brains'],
  auth: 'required',
  query: historyQuery,
  responses: {
    200: historyResponse('the brain and its file uploads'),
    401: { description: 'Not logged in' },
    403: { description: "Neither staff nor the brain's uploader" },
    404: { description: 'No brain was ever created with this key, or it is one you may not see' },
  },
  async handler(ctx) {
    const principal = ctx.principal!;
    const key = ctx.params.key ?? '';
    const first = await readBrainStream(deps.store, key);
    const created = first && brainCreatedIn(first.events);
    // A brain the caller may not see now (deleted: as it was then) is answered as if it never existed.
    if (!first || !created || !mayNowSee(first.events, viewerOf(principal))) throw new NotFoundError();
    if (!principal.isStaff && principal.userId !== created.uploaderId) throw new PermissionDeniedError();
    const { brainId } = first;
    const uploadIds = new Set(await brainUploadIds(deps.readModels, brainId));
    if (created.fileUploadId) uploadIds.add(created.fileUploadId);
    const readAll = async (): Promise<RecordedEvent[]> => {
      const [brain, ...uploads] = await Promise.all([
        readBrainStream(deps.store, String(brainId)),
        ...[...uploadIds].map((id) => deps.store.readStream(uploadStreamName(id))),
      ]);
      return mergeByPosition([brain?.events ?? [], ...uploads]);
    };
    // The streams are read after the rows, so that every listed event is in the replay.
    const rows = await historyRows(deps.readModels, [
      { type: 'brain', ids: [String(brainId)] },
      { type: 'file_upload', ids: [...uploadIds] },
    ]);
    const events = await readAll();
    return historyReply(ctx, rows, replayTimeline(events, brainShapeBReplay(brainId, ctx.baseUrl)));
  },
});
