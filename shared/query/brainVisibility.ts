import { type Viewer, type Visibility, canSeeBrain } from '#shared/domain/brains/visibility';
import {
  type ActiveBrain,
  type BrainEvent,
  type BrainState,
  collaboratorIdsOf,
  evolveBrain,
  initialBrainState,
} from '#shared/domain/brains/events';
import type { RecordedEvent } from '#shared/eventStore/eventStore';
import { streamFold } from '#shared/eventStore/streamFold';
import type { SqlConditions } from './sqlConditions';

/** Where the rule's values go (SqlConditions, or sqlConditions.sharedParams of one). */
type Params = Pick<SqlConditions, 'param'>;

/**
 * The visibility rule (shared/domain/brains/visibility.canSeeBrain) as SQL over a brains row
 * (`alias`, with the columns visibility, embargo_until, uploader_id, id): public, an embargo whose
 * time has passed (by the database's clock: `now()`, the transaction's start), the uploader, a
 * collaborator; staff see everything. Undefined when nothing is left out (staff).
 *
 * Placeholders come from `conditions.param`, so the text is fixed per kind of viewer and the
 * statement stays one named plan: anonymous, and one signed-in shape whatever the user.
 */
export function visibleBrainSql(conditions: Params, viewer: Viewer, alias = 'b'): string | undefined {
  if (viewer.isStaff) return undefined;
  const open = `${alias}.visibility = 'public' OR (${alias}.visibility = 'embargoed' AND ${alias}.embargo_until <= now())`;
  if (viewer.userId === null) return open;
  const user = conditions.param(viewer.userId);
  return `${open} OR ${alias}.uploader_id = ${user}
    OR EXISTS (SELECT 1 FROM brain_collaborators bc WHERE bc.brain_id = ${alias}.id AND bc.user_id = ${user})`;
}

/** Adds the rule to `conditions` (nothing for staff). */
export function whereVisible(conditions: SqlConditions, viewer: Viewer, alias = 'b'): SqlConditions {
  const sql = visibleBrainSql(conditions, viewer, alias);
  return sql === undefined ? conditions : conditions.where(sql);
}

/**
 * The rule for a brain id alone (a file upload's brain, a species' compact list): true when there
 * is no brain (`brainId` null) or when the viewer may see it.
 */
export function visibleBrainIdSql(conditions: Params, viewer: Viewer, brainIdSql: string): string {
  const rule = visibleBrainSql(conditions, viewer, 'vb');
  if (rule === undefined) return 'true';
  return `(${brainIdSql} IS NULL OR EXISTS (SELECT 1 FROM brains vb WHERE vb.id = ${brainIdSql} AND (${rule})))`;
}

/**
 * The non-public brains the viewer may not see (stored visibility not public, and not seen by the
 * rule): undefined for staff, who see them all. Written so the partial index of the non-public
 * brains (brainsProjection) finds them: what stored counts hold beyond what the viewer may see.
 */
export function hiddenBrainSql(conditions: Params, viewer: Viewer, alias = 'b'): string | undefined {
  const rule = visibleBrainSql(conditions, viewer, alias);
  return rule === undefined
    ? undefined
    : `${alias}.visibility <> 'public' AND NOT coalesce((${rule}), false)`;
}

/**
 * The lists' `visibility` filter, on the visibility a brain reads as (an embargo whose time has
 * passed is public, not embargoed), by the database's clock as the rule is.
 */
export function effectiveVisibilitySql(visibility: Visibility, alias = 'b'): string {
  switch (visibility) {
    case 'public':
      return `${alias}.visibility = 'public' OR (${alias}.visibility = 'embargoed' AND ${alias}.embargo_until <= now())`;
    case 'private':
      return `${alias}.visibility <> 'public' AND ${alias}.visibility = 'private'`;
    case 'embargoed':
      return `${alias}.visibility <> 'public' AND ${alias}.visibility = 'embargoed' AND NOT coalesce(${alias}.embargo_until <= now(), false)`;
  }
}

/**
 * A member count kept by a projection over all brains (a species', an atlas's, a category's
 * brains_count) as the viewer may see it: the stored count less the non-public brains they may
 * not see, counted per member column once (through the partial index of the non-public brains)
 * and joined by the owner's id. Staff see the stored count.
 */
export function visibleBrainCount(
  params: Params,
  viewer: Viewer,
  member: {
    readonly stored: string;
    readonly column: 'species_id' | 'atlas_id' | 'category_id';
    readonly ownerId: string;
  },
): { readonly join: string; readonly count: string } {
  const hidden = hiddenBrainSql(params, viewer, 'hb');
  if (hidden === undefined) return { join: '', count: member.stored };
  return {
    join: `LEFT JOIN (SELECT hb.${member.column} AS owner_id, count(*)::integer AS n FROM brains hb
                       WHERE ${hidden} GROUP BY hb.${member.column}) hidden_brains
             ON hidden_brains.owner_id = ${member.ownerId}`,
    count: `(${member.stored} - coalesce(hidden_brains.n, 0))`,
  };
}

/** A brain's state, and its last active one (the same while it is not deleted). */
interface Lived {
  readonly state: BrainState;
  readonly lastActive: ActiveBrain | undefined;
}

const lived = streamFold<Lived>(
  () => ({ state: initialBrainState(), lastActive: undefined }),
  (previous, event) => {
    const state = evolveBrain(previous.state, event as unknown as BrainEvent);
    return { state, lastActive: state.status === 'active' ? state : previous.lastActive };
  },
);

/**
 * The brain as it is now, or as it was last before it was deleted; undefined when the events
 * never created it. Remembered per event (streamFold): a replay's requests share the work.
 */
export function lastActiveBrain(events: readonly RecordedEvent[]): ActiveBrain | undefined {
  return lived(events).lastActive;
}

/**
 * Whether the viewer may see the brain of these events (its whole stream) now, by the visibility
 * rule: a deleted brain by the state it was deleted in. What they may not see now is answered as
 * if it had never existed (decisions.md "Visibility and collaborators"), its past included.
 */
export function mayNowSee(events: readonly RecordedEvent[], viewer: Viewer, nowMs = Date.now()): boolean {
  const brain = lastActiveBrain(events);
  if (!brain) return false;
  return canSeeBrain({ ...brain, collaboratorIds: collaboratorIdsOf(brain) }, viewer, nowMs);
}
