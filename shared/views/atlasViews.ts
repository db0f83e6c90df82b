/** JSON representation of an atlas (interface-spec 2.6, decisions.md "Catalogue"). */
export interface AtlasSpeciesRef {
  readonly id: number;
  readonly name: string;
  readonly scientific_name: string;
  readonly category: { readonly id: number; readonly name: string };
}

export interface AtlasRow {
  readonly id: number;
  readonly name: string;
  readonly slug: string;
  readonly description: string;
  readonly species: AtlasSpeciesRef;
  readonly is_official: boolean;
  readonly verified: boolean;
  readonly version: string;
  readonly color: string;
  readonly brains_count: number;
  readonly publication_url: string;
}

export const atlasJson = (a: AtlasRow) => ({
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

export const atlasSchema = {
  type: 'object',
  required: [
    'id',
    'name',
    'slug',
    'description',
    'species',
    'is_official',
    'verified',
    'version',
    'color',
    'brains_count',
    'publication_url',
  ],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    slug: { type: 'string', description: 'Lowercase, URL-safe, unique; derived from name (and version).' },
    description: { type: 'string' },
    species: {
      type: 'object',
      properties: {
        id: { type: 'integer' },
        name: { type: 'string' },
        scientific_name: { type: 'string' },
        category: {
          type: 'object',
          properties: { id: { type: 'integer' }, name: { type: 'string' } },
        },
      },
    },
    is_official: { type: 'boolean' },
    verified: { type: 'boolean' },
    version: { type: 'string' },
    color: { type: 'string', description: '#rrggbb (lowercase), or "" when none was given.' },
    brains_count: { type: 'integer' },
    publication_url: { type: 'string', description: 'http(s) URL, or "" when none was given.' },
  },
} as const;
