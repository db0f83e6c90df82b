import type { AtlasRow } from '#shared/views/atlasViews';
import type { Viewer } from '#shared/domain/brains/visibility';
import { visibleBrainCount } from '#shared/query/brainVisibility';
import { type SqlConditions, sharedParams } from '#shared/query/sqlConditions';

/**
 * Atlases with their species and its category, flat (atlasRowOf nests them), and brains_count as
 * the viewer sees it: brains they may not see are not counted (decisions.md "Visibility and
 * collaborators"). `select` is the rows' `SELECT … FROM …`, `from` the same rows for a count,
 * `brainsCount` the count as an expression to order by; their values go into `conditions`, so the
 * route's own conditions follow them.
 */
export function atlasQuery(
  conditions: SqlConditions,
  viewer: Viewer,
): { readonly select: string; readonly from: string; readonly brainsCount: string } {
  const counted = visibleBrainCount(sharedParams(conditions), viewer, {
    stored: 'a.brains_count',
    column: 'atlas_id',
    ownerId: 'a.id',
  });
  const from = `FROM atlases a JOIN species s ON s.id = a.species_id JOIN categories c ON c.id = s.category_id
    ${counted.join}`;
  const select = `
  SELECT a.id, a.name, a.slug, a.description, a.is_official, a.verified, a.version, a.color,
    ${counted.count} AS brains_count, a.publication_url, s.id AS species_id, s.name AS species_name,
    s.scientific_name, c.id AS category_id, c.name AS category_name
  ${from}`;
  return { select, from, brainsCount: counted.count };
}

export interface FlatAtlasRow extends Omit<AtlasRow, 'species'> {
  readonly species_id: number;
  readonly species_name: string;
  readonly scientific_name: string;
  readonly category_id: number;
  readonly category_name: string;
}

export function atlasRowOf(r: FlatAtlasRow): AtlasRow {
  return {
    ...r,
    species: {
      id: r.species_id,
      name: r.species_name,
      scientific_name: r.scientific_name,
      category: { id: r.category_id, name: r.category_name },
    },
  };
}
