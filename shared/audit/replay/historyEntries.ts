/**
 * History entries (decisions.md "Audit"): one per audited event of the resource, oldest first, each
 * the event log's entry without `data` plus `changes`, the fields of the representation the event
 * changed. The entry's metadata comes from the audit rows; the changes from a replay's timeline.
 */
import { type Changes, changesBetween } from '#shared/audit/changes';
import type { TimelineStep } from './timeline';

export type WithChanges<Base> = Base & { readonly changes: Changes };

/**
 * One entry per row, in the rows' order: `base(row)` and the changes its event made in the timeline
 * (matched by event id). A row whose event the replay did not fold changed nothing the
 * representation shows ({}); a delete changes nothing either (changesBetween(before, undefined)).
 */
export function historyEntries<Row extends { readonly event_id: string }, Base extends object>(
  rows: readonly Row[],
  steps: readonly TimelineStep[],
  base: (row: Row) => Base,
): Array<WithChanges<Base>> {
  const byEvent = new Map(steps.map((step) => [step.event.id, step]));
  return rows.map((row) => {
    const step = byEvent.get(row.event_id);
    return { ...base(row), changes: step ? changesBetween(step.before, step.after) : {} };
  });
}
