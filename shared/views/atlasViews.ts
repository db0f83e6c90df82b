import { type Static, Type } from '@sinclair/typebox';

/** A species as an atlas shows it, with its category. */
export const atlasSpeciesRefSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  scientific_name: Type.String(),
  category: Type.Object({ id: Type.Integer(), name: Type.String() }),
});
export type AtlasSpeciesRef = Static<typeof atlasSpeciesRefSchema>;

/** JSON representation of an atlas (interface-spec 2.6, decisions.md "Catalogue"). */
export const atlasSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  slug: Type.String({ description: 'Lowercase, URL-safe, unique; derived from name (and version).' }),
  description: Type.String(),
  species: atlasSpeciesRefSchema,
  is_official: Type.Boolean(),
  verified: Type.Boolean(),
  version: Type.String(),
  color: Type.String({ description: '#rrggbb (lowercase), or "" when none was given.' }),
  brains_count: Type.Integer(),
  publication_url: Type.String({ description: 'http(s) URL, or "" when none was given.' }),
});
export type AtlasRow = Static<typeof atlasSchema>;

export const atlasJson = (a: AtlasRow): AtlasRow => ({
  id: a.id,
  name: a.name,
  slug: a.slug,
  description: a.description,
  species: {
    id: a.species.id,
    name: a.species.name,
    scientific_name: a.species.scientific_name,
    category: { id: a.species.category.id, name: a.species.category.name },
  },
  is_official: a.is_official,
  verified: a.verified,
  version: a.version,
  color: a.color,
  brains_count: a.brains_count,
  publication_url: a.publication_url,
});
