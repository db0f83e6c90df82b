import type { AtlasRow } from '#shared/views/atlasViews';

/** Atlases with their species and its category, flat (atlasRowOf nests them). */
export const ATLAS_FROM = `FROM atlases a JOIN species s ON s.id = a.species_id JOIN categories c ON c.id = s.category_id`;

export const ATLAS_SELECT = `
  SELECT a.id, a.name, a.slug, a.description, a.is_official, a.verified, a.version, a.color,
    a.brains_count, a.publication_url, s.id AS species_id, s.name AS species_name, s.scientific_name,
    c.id AS category_id, c.name AS category_name
  ${ATLAS_FROM}`;

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
