import type { Viewer, Visibility } from '#shared/domain/brains/visibility';
import type { SqlConditions } from './sqlConditions';

/**
 * The visibility rule (shared/domain/brains/visibility.canSeeBrain) as SQL over a brains row
 * (`alias`, with the columns visibility, embargo_until, uploader_id, id): public, an embargo whose
 * time has passed (by the database's clock: `now()`, the transaction's start), the uploader, a
 * collaborator; staff see everything. Undefined when nothing is left out (staff).
 *
 * Placeholders come from `conditions.param`, so the text is fixed per kind of viewer and the
 * statement stays one named plan: anonymous, and one signed-in shape whatever the user.
 */
export function visibleBrainSql(conditions: SqlConditions, viewer: Viewer, alias = 'b'): string | undefined {
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
export function visibleBrainIdSql(conditions: SqlConditions, viewer: Viewer, brainIdSql: string): string {
  const rule = visibleBrainSql(conditions, viewer, 'vb');
  if (rule === undefined) return 'true';
  return `(${brainIdSql} IS NULL OR EXISTS (SELECT 1 FROM brains vb WHERE vb.id = ${brainIdSql} AND (${rule})))`;
}

/**
 * The non-public brains the viewer may not see (stored visibility not public, and not seen by the
 * rule): undefined for staff, who see them all. Written so the partial index of the non-public
 * brains (brainsProjection) finds them: what stored counts hold beyond what the viewer may see.
 */
export function hiddenBrainSql(conditions: SqlConditions, viewer: Viewer, alias = 'b'): string | undefined {
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
