/** JSON representation of a species (interface-spec 2.5, decisions.md "Catalogue"). */
export interface CompactBrain {
  readonly id: number;
  readonly name: string;
  readonly readable_id: string;
}

export interface CompactAtlas {
  readonly id: number;
  readonly name: string;
  readonly slug: string;
}

export interface SpeciesRow {
  readonly id: number;
  readonly name: string;
  readonly scientific_name: string;
  readonly description: string;
  readonly category_id: number;
  readonly category_name: string;
  /** At most COMPACT_LIMIT of each; the counts are exact. */
  readonly brains: readonly CompactBrain[];
  readonly atlases: readonly CompactAtlas[];
  readonly brains_count: number;
  readonly atlases_count: number;
}

/** decisions.md: a species carries at most 100 compact brains and atlases. */
export const COMPACT_LIMIT = 100;

export const speciesJson = (s: SpeciesRow) => ({
  id: s.id,
  name: s.name,
  scientific_name: s.scientific_name,
  description: s.description,
  category: { id: s.category_id, name: s.category_name },
  category_name: s.category_name,
  brains: s.brains,
  atlases: s.atlases,
  brains_count: s.brains_count,
  atlases_count: s.atlases_count,
});

const idName = {
  type: 'object',
  required: ['id', 'name'],
  properties: { id: { type: 'integer' }, name: { type: 'string' } },
} as const;

export const speciesSchema = {
  type: 'object',
  required: [
    'id',
    'name',
    'scientific_name',
    'description',
    'category',
    'category_name',
    'brains',
    'atlases',
    'brains_count',
    'atlases_count',
  ],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string', description: 'Lowercase; unique.' },
    scientific_name: { type: 'string', description: 'First word capitalised, the others lowercase; unique.' },
    description: { type: 'string' },
    category: idName,
    category_name: { type: 'string' },
    brains: {
      type: 'array',
      maxItems: COMPACT_LIMIT,
      items: {
        type: 'object',
        properties: { id: { type: 'integer' }, name: { type: 'string' }, readable_id: { type: 'string' } },
      },
    },
    atlases: {
      type: 'array',
      maxItems: COMPACT_LIMIT,
      items: {
        type: 'object',
        properties: { id: { type: 'integer' }, name: { type: 'string' }, slug: { type: 'string' } },
      },
    },
    brains_count: { type: 'integer' },
    atlases_count: { type: 'integer' },
  },
} as const;
