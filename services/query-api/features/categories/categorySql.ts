import type { Viewer } from '#shared/domain/brains/visibility';
import { visibleBrainCount } from '#shared/query/brainVisibility';
import { type SqlConditions, sharedParams } from '#shared/query/sqlConditions';
import { CATEGORY_COLUMNS } from '#shared/views/categoryViews';

/**
 * Categories (alias c) with brains_count as the viewer sees it: brains they may not see are not
 * counted (decisions.md "Visibility and collaborators"). `select` is the rows' `SELECT … FROM …`,
 * `from` the same rows for a count, `brainsCount` the count as an expression to order by; their
 * values go into `conditions`, so the route's own conditions follow them.
 */
export function categoryQuery(
  conditions: SqlConditions,
  viewer: Viewer,
): { readonly select: string; readonly from: string; readonly brainsCount: string } {
  const counted = visibleBrainCount(sharedParams(conditions), viewer, {
    stored: 'c.brains_count',
    column: 'category_id',
    ownerId: 'c.id',
  });
  const columns = CATEGORY_COLUMNS.split(',')
    .map((column) => column.trim())
    .map((column) => (column === 'brains_count' ? `${counted.count} AS brains_count` : `c.${column}`));
  const from = `FROM categories c ${counted.join}`;
  return { select: `SELECT ${columns.join(', ')} ${from}`, from, brainsCount: counted.count };
}
