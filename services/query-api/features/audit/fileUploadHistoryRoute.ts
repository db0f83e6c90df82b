/**
 * GET /api/file-uploads/{id}/history/ (decisions.md "Audit", History): every audited event of the
 * upload, oldest first, each with the changes it made to the upload's representation, by replay.
 * Its uploader, staff and the collaborators of its brain may read it, also after the upload was
 * deleted (collaborators while the brain is shared with them); anyone else is answered 404, as for
 * an upload that never existed (uploads are private).
 */
import type { RouteSpec } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';
import { mergeByPosition, replayTimeline } from '#shared/audit/replay/timeline';
import { uploadReplay } from '#shared/audit/replay/uploadReplay';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { historyQuery, historyReply, historyResponse, historyRows } from './historyReply';
import { readUploadStreams } from './fileUploadAsOf';

export const fileUploadHistoryRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/file-uploads/{id}/history/',
  operationId: 'getFileUploadHistory',
  summary: 'What happened to one of your uploads, event by event, with the fields each event changed',
  description:
    "The upload's events (received, processing started, completed or failed, deleted), oldest first; `changes` are {field: [before, after]} of the upload's representation, computed by replay. Still answered after the upload was deleted. Its uploader, staff and the collaborators of its brain only (404 for anyone else). An array; {count, next, previous, results} with page or page_size.",
  tags: ['audit', 'file uploads'],
  auth: 'required',
  query: historyQuery,
  responses: {
    200: historyResponse('the upload'),
    401: { description: 'Not logged in' },
    404: { description: 'No such upload, or neither yours nor of a brain shared with you' },
  },
  async handler(ctx) {
    const principal = ctx.principal!;
    const id = ctx.params.id ?? '';
    const first = await readUploadStreams(deps, id, principal);
    if (!first) throw new NotFoundError();
    const rows = await historyRows(deps.readModels, [{ type: 'file_upload', ids: [first.uploadId] }]);
    // Read again after the rows, so that every listed event is in the replay.
    const found = (await readUploadStreams(deps, id, principal)) ?? first;
    const events = mergeByPosition(found.streams);
    return historyReply(ctx, rows, replayTimeline(events, uploadReplay(found.uploadId, ctx.baseUrl)));
  },
});
