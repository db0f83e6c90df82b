import { COMPACT_LIMIT } from '#shared/views/speciesViews';

/** Species rows with their category and compact brains and atlases (speciesViews.SpeciesRow). */
export const SPECIES_SELECT = `
  SELECT s.id, s.name, s.scientific_name, s.description, s.category_id, c.name AS category_name,
    s.brains_count, s.atlases_count,
    COALESCE((SELECT json_agg(json_build_object('id', b.id, 'name', b.name, 'readable_id', b.readable_id)
                ORDER BY b.id)
              FROM (SELECT id, name, readable_id FROM brains WHERE species_id = s.id
                    ORDER BY id LIMIT ${COMPACT_LIMIT}) b), '[]'::json) AS brains,
    COALESCE((SELECT json_agg(json_build_object('id', a.id, 'name', a.name, 'slug', a.slug)
                ORDER BY lower(a.name), a.id)
              FROM (SELECT id, name, slug FROM atlases WHERE species_id = s.id
                    ORDER BY lower(name), id LIMIT ${COMPACT_LIMIT}) a), '[]'::json) AS atlases
  FROM species s JOIN categories c ON c.id = s.category_id`;

export const SPECIES_FROM = 'FROM species s JOIN categories c ON c.id = s.category_id';

/** A scientific name with any run of spaces, "+", "_" or "-" as one space, lowercase (naming.scientificNameKey). */
export const SCIENTIFIC_NAME_KEY_SQL = `regexp_replace(lower(s.scientific_name), '[[:space:]+_-]+', ' ', 'g')`;
