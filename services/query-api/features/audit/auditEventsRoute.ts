import { Type } from '@sinclair/typebox';
import { PermissionDeniedError } from '#shared/errors/httpErrors';
import type { RequestContext, RouteSpec } from '#shared/http/routeSpec';
import { Nullable } from '#shared/views/nullable';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { auditEntrySchema } from './auditEntry';
import { AuditEventsQuery, DEFAULT_LIMIT, eventLogFilter } from './auditEventsFilter';
import { entryTexts, seqBounds } from './auditEventsQuery';
import { exportStream } from './auditEventsExport';

export const NDJSON = 'application/x-ndjson';

const EventLogPage = Type.Object({
  results: Type.Array(auditEntrySchema),
  next: Nullable(
    Type.String({
      format: 'uri',
      description:
        'The same filters after the last result; null when this page holds the last matching event.',
    }),
  ),
});

/** `next`: the request's own URL (every filter kept) with `after` at the last result. */
function nextUrl(ctx: RequestContext, after: string): string {
  const url = new URL(ctx.req.originalUrl, ctx.baseUrl);
  url.searchParams.set('after', after);
  return url.toString();
}

const wantsNdjson = (ctx: RequestContext): boolean =>
  ctx.req.accepts(['application/json', NDJSON]) === NDJSON;

export const auditEventsRoute = (deps: QueryDeps): RouteSpec<unknown, typeof AuditEventsQuery> => ({
  method: 'get',
  path: '/api/audit/events/',
  operationId: 'listAuditEvents',
  summary: 'The event log: every event in global order (staff)',
  description:
    'Oldest first (global order). Filters combine with AND: `resource_type` (with `resource_id`), `type` (comma-separated), `actor` (a user id), `request_id`, `since` (inclusive) and `until` (exclusive) recorded times, `after` (an event position: results start right after it). Internal bookkeeping events only with `include_internal=true`. Answers `{results, next}`: follow `next` (the same filters, `after` = the last position) until it is null, then poll with `after` = the last position seen: every matching event arrives exactly once, in order. With `Accept: application/x-ndjson`, every matching event up to the newest at the time of the request, one JSON entry per line, without paging (`limit` then caps the total). Payloads never carry secrets or hashes.',
  tags: ['audit'],
  auth: 'required',
  query: AuditEventsQuery,
  responses: {
    200: {
      description: `A page of events (or, with Accept: ${NDJSON}, every matching event, one per line)`,
      schema: EventLogPage,
    },
    400: { description: 'A bad filter value, named by its field' },
    403: { description: 'Not staff' },
  },
  async handler(ctx) {
    if (!ctx.principal!.isStaff) throw new PermissionDeniedError('Only staff may read the event log.');
    const filter = eventLogFilter(ctx.query);
    const bounds = await seqBounds(deps.readModels, filter);
    const limit = ctx.query.limit;
    if (wantsNdjson(ctx))
      return {
        status: 200,
        headers: { 'Content-Type': NDJSON },
        raw: exportStream(deps.readModels, filter, bounds, {
          limit,
          logger: deps.logger,
          requestId: ctx.requestId,
        }),
      };
    const pageSize = limit ?? DEFAULT_LIMIT;
    // One more than the page: whether the page holds the last matching event.
    const page = await entryTexts(deps.readModels, filter, bounds, { from: 0, limit: pageSize + 1 });
    const results = page.entries.slice(0, pageSize);
    const last = page.positions[results.length - 1];
    const next = page.entries.length > pageSize && last ? nextUrl(ctx, last) : null;
    // The entries come as JSON text (the payload as stored, never parsed here): the page is written around them.
    return { status: 200, json: `{"results":[${results.join(',')}],"next":${JSON.stringify(next)}}` };
  },
});
