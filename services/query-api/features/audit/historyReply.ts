/**
 * What every history route shares (decisions.md "Audit"): the audited events of a set of resources
 * from `audit_events`, turned into entries with the changes a replay computed, answered by the list
 * rule (an array, oldest first; the envelope with page/page_size).
 */
import { Type } from '@sinclair/typebox';
import type { Pool } from 'pg';
import type { Reply, RequestContext } from '#shared/http/routeSpec';
import { listQueryProperties, listReply, listResponseSchema } from '#shared/query/listResponse';
import { historyEntries } from '#shared/audit/replay/historyEntries';
import type { TimelineStep } from '#shared/audit/replay/timeline';
import type { AuditResourceType } from '#shared/audit/auditedEvent';
import { type AuditRow, auditEntryBase, auditSelect, historyEntrySchema } from './auditEntry';

/** The query of a history route: the list rule's paging (history has one order: oldest first). */
export const historyQuery = Type.Object({
  page: listQueryProperties.page,
  page_size: listQueryProperties.page_size,
});

/** The 200 response of a history route. */
export const historyResponse = (what: string) => ({
  description: `Every audited event of ${what}, oldest first, with the fields of its representation each one changed`,
  schema: listResponseSchema(historyEntrySchema),
});

/** Resources whose events a history lists: one type, some ids. */
export interface HistorySubject {
  readonly type: AuditResourceType;
  readonly ids: readonly string[];
}

/** The audited (not internal) events of these resources, in global order. */
export async function historyRows(pool: Pool, subjects: readonly HistorySubject[]): Promise<AuditRow[]> {
  const params: unknown[] = [];
  const conditions = subjects
    .filter((subject) => subject.ids.length > 0)
    .map((subject) => {
      params.push(subject.type, subject.ids);
      return `(e.resource_type = $${params.length - 1} AND e.resource_id = ANY($${params.length}::text[]))`;
    });
  if (conditions.length === 0) return [];
  const { rows } = await pool.query<AuditRow>(
    `${auditSelect(false)} WHERE NOT e.internal AND (${conditions.join(' OR ')}) ORDER BY e.seq`,
    params,
  );
  return rows;
}

/** The answer: one entry per row (oldest first) with its changes from the replay's timeline. */
export function historyReply(
  ctx: RequestContext,
  rows: readonly AuditRow[],
  steps: readonly TimelineStep[],
): Promise<Reply> {
  // Only the page's entries are built (a long history is replayed once, but compared only where asked).
  return listReply(ctx, {
    count: () => Promise.resolve(rows.length),
    fetch: ({ limit, offset }) =>
      Promise.resolve(historyEntries(rows.slice(offset, offset + limit), steps, auditEntryBase)),
  });
}
