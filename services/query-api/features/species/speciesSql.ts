import { COMPACT_LIMIT } from '#shared/views/speciesViews';
import type { Viewer } from '#shared/domain/brains/visibility';
import { visibleBrainCount, visibleBrainSql } from '#shared/query/brainVisibility';
import { type SqlConditions, sharedParams } from '#shared/query/sqlConditions';

/**
 * Species rows with their category and compact brains and atlases (speciesViews.SpeciesRow), as
 * the viewer sees them: the brains they may not see are neither listed nor counted (decisions.md
 * "Visibility and collaborators"). `select` is the rows' `SELECT … FROM …`, `from` the same rows
 * for a count, `brainsCount` the count as an expression to order by; their values go into
 * `conditions`, so the route's own conditions follow them.
 */
export function speciesQuery(
  conditions: SqlConditions,
  viewer: Viewer,
): { readonly select: string; readonly from: string; readonly brainsCount: string } {
  const params = sharedParams(conditions);
  const rule = visibleBrainSql(params, viewer, 'vb');
  const counted = visibleBrainCount(params, viewer, {
    stored: 's.brains_count',
    column: 'species_id',
    ownerId: 's.id',
  });
  const from = `FROM species s JOIN categories c ON c.id = s.category_id ${counted.join}`;
  const select = `
  SELECT s.id, s.name, s.scientific_name, s.description, s.category_id, c.name AS category_name,
    ${counted.count} AS brains_count, s.atlases_count,
    COALESCE((SELECT json_agg(json_build_object('id', b.id, 'name', b.name, 'readable_id', b.readable_id)
                ORDER BY b.id)
              FROM (SELECT vb.id, vb.name, vb.readable_id FROM brains vb
                     WHERE vb.species_id = s.id ${rule === undefined ? '' : `AND (${rule})`}
                    ORDER BY vb.id LIMIT ${COMPACT_LIMIT}) b), '[]'::json) AS brains,
    COALESCE((SELECT json_agg(json_build_object('id', a.id, 'name', a.name, 'slug', a.slug)
                ORDER BY lower(a.name), a.id)
              FROM (SELECT id, name, slug FROM atlases WHERE species_id = s.id
                    ORDER BY lower(name), id LIMIT ${COMPACT_LIMIT}) a), '[]'::json) AS atlases
  ${from}`;
  return { select, from, brainsCount: counted.count };
}

/** A scientific name with any run of spaces, "+", "_" or "-" as one space, lowercase (naming.scientificNameKey). */
export const SCIENTIFIC_NAME_KEY_SQL = `regexp_replace(lower(s.scientific_name), '[[:space:]+_-]+', ' ', 'g')`;
