/**
 * GET /api/auth/me/history/ (decisions.md "Audit", History): every audited event of the caller's
 * account and of its access tokens, oldest first, each with the changes it made to the account's
 * representation (GET /api/auth/me/) or, for a token event, to the token's, by replay.
 */
import type { RouteSpec } from '#shared/http/routeSpec';
import { userStreamName } from '#shared/domain/accounts/events';
import { accountTimeline, tokenIdsIn } from '#shared/audit/replay/accountReplay';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { historyQuery, historyReply, historyResponse, historyRows } from './historyReply';

export const meHistoryRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/auth/me/history/',
  operationId: 'myHistory',
  summary: 'What happened to your account and its tokens, event by event, with the fields each event changed',
  description:
    'Your account\'s events (registration, profile and password changes) and your tokens\' (issued, revoked; resource type "token"), oldest first; `changes` are {field: [before, after]} of GET /api/auth/me/ or of the token, computed by replay. Never a password or token hash. An array; {count, next, previous, results} with page or page_size.',
  tags: ['audit', 'auth'],
  auth: 'required',
  query: historyQuery,
  responses: {
    200: historyResponse('your account and its tokens'),
    401: { description: 'Not logged in' },
  },
  async handler(ctx) {
    const userId = ctx.principal!.userId;
    const stream = userStreamName(userId);
    const first = await deps.store.readStream(stream);
    const rows = await historyRows(deps.readModels, [
      { type: 'user', ids: [String(userId)] },
      { type: 'token', ids: tokenIdsIn(first) },
    ]);
    // A row newer than the first read (a login meanwhile): read again, so every listed event is replayed.
    const seen = new Set(first.map((event) => event.id));
    const events = rows.every((row) => seen.has(row.event_id)) ? first : await deps.store.readStream(stream);
    return historyReply(ctx, rows, accountTimeline(events, ctx.baseUrl));
  },
});
