import { type Static, Type } from '@sinclair/typebox';

/** decisions.md: a species carries at most 100 compact brains and atlases. */
export const COMPACT_LIMIT = 100;

const compactBrainSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  readable_id: Type.String(),
});
export type CompactBrain = Static<typeof compactBrainSchema>;

const compactAtlasSchema = Type.Object({ id: Type.Integer(), name: Type.String(), slug: Type.String() });
export type CompactAtlas = Static<typeof compactAtlasSchema>;

/** JSON representation of a species (interface-spec 2.5, decisions.md "Catalogue"). */
export const speciesSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String({ description: 'Lowercase; unique.' }),
  scientific_name: Type.String({ description: 'First word capitalised, the others lowercase; unique.' }),
  description: Type.String(),
  category: Type.Object({ id: Type.Integer(), name: Type.String() }),
  category_name: Type.String(),
  brains: Type.Array(compactBrainSchema, { maxItems: COMPACT_LIMIT }),
  atlases: Type.Array(compactAtlasSchema, { maxItems: COMPACT_LIMIT }),
  brains_count: Type.Integer(),
  atlases_count: Type.Integer(),
});
export type SpeciesJson = Static<typeof speciesSchema>;

/** A row of the `species` read model with its compact brains and atlases, as speciesJson reads it. */
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

export const speciesJson = (s: SpeciesRow): SpeciesJson => ({
  id: s.id,
  name: s.name,
  scientific_name: s.scientific_name,
  description: s.description,
  category: { id: s.category_id, name: s.category_name },
  category_name: s.category_name,
  brains: [...s.brains],
  atlases: [...s.atlases],
  brains_count: s.brains_count,
  atlases_count: s.atlases_count,
});
