/**
 * History of a category, species or atlas (decisions.md "Audit"): the audited events of its own
 * stream, each with the fields of its representation (what the detail route answers, counts and
 * compact member lists included) that changed between the points right before and right after it,
 * both computed by replay.
 */
import type { Reply, RequestContext } from '#shared/http/routeSpec';
import type { Representation } from '#shared/audit/changes';
import type { TimelineStep } from '#shared/audit/replay/timeline';
import type { Replayed } from '#shared/audit/replay/catalogueReplay';
import {
  type CatalogueReplaySource,
  type ReplayPoint,
  catalogueReplaySource,
  pointBefore,
  pointOfRow,
} from '#shared/audit/replay/catalogueReplaySource';
import { AuthenticationError, PermissionDeniedError } from '#shared/errors/httpErrors';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { listReply } from '#shared/query/listResponse';
import { historyEntries } from '#shared/audit/replay/historyEntries';
import { historyRows } from './historyReply';
import { auditEntryBase } from './auditEntry';

export type CatalogueRepresentAt = (
  source: CatalogueReplaySource,
  point: ReplayPoint,
) => Promise<Replayed<Representation> | undefined>;

/** 401 anonymous; 403 for an authenticated caller who is not staff (unless `alsoAllowed`). */
export function requireStaff(ctx: RequestContext, alsoAllowed = false): void {
  if (!ctx.principal) throw new AuthenticationError();
  if (!ctx.principal.isStaff && !alsoAllowed) throw new PermissionDeniedError();
}

/**
 * The history answer of the resource whose own stream is `streamName`. Only the entries of the
 * page asked for are replayed (each replays the members up to its point, twice).
 */
export async function catalogueHistoryReply(
  ctx: RequestContext,
  deps: QueryDeps,
  resource: {
    readonly type: 'category' | 'species' | 'atlas';
    readonly id: number;
    readonly streamName: string;
  },
  representAt: CatalogueRepresentAt,
): Promise<Reply> {
  const rows = await historyRows(deps.readModels, [{ type: resource.type, ids: [String(resource.id)] }]);
  // Read after the rows, so that every listed event is found.
  const events = new Map((await deps.store.readStream(resource.streamName)).map((e) => [e.id, e]));
  const source = catalogueReplaySource(deps.readModels, deps.store);
  return listReply(ctx, {
    count: () => Promise.resolve(rows.length),
    async fetch({ limit, offset }) {
      const page = rows.slice(offset, offset + limit);
      const steps: TimelineStep[] = [];
      for (const row of page) {
        const event = events.get(row.event_id);
        if (!event) continue;
        const point = pointOfRow(row);
        const after = await representAt(source, point);
        const before = await representAt(source, pointBefore(point));
        steps.push({ event, before: before?.json, after: after?.json });
      }
      return historyEntries(page, steps, auditEntryBase);
    },
  });
}
