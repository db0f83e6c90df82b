/** Events of the `species-<id>` stream. */
export type SpeciesCreated = {
  readonly type: 'SpeciesCreated';
  readonly data: {
    readonly speciesId: number;
    /** Lowercase; unique. */
    readonly name: string;
    /** "Mus musculus" (naming.formatScientificName); unique, case-insensitively. */
    readonly scientificName: string;
    readonly description: string;
    readonly categoryId: number;
    readonly createdBy: number;
    readonly createdAt: string;
  };
};

export type SpeciesEvent = SpeciesCreated;

export type SpeciesState =
  | { readonly status: 'none' }
  | { readonly status: 'created'; readonly speciesId: number; readonly categoryId: number };

export const initialSpeciesState = (): SpeciesState => ({ status: 'none' });

export function evolveSpecies(_state: SpeciesState, event: SpeciesEvent): SpeciesState {
  switch (event.type) {
    case 'SpeciesCreated':
      return { status: 'created', speciesId: event.data.speciesId, categoryId: event.data.categoryId };
  }
}

export const speciesDecider = { initialState: initialSpeciesState, evolve: evolveSpecies };
export const speciesStreamName = (speciesId: number): string => `species-${speciesId}`;
/** Reservation scopes that keep species names and scientific names unique (case-insensitively). */
export const SPECIES_NAME_SCOPE = 'species_name';
export const SPECIES_SCIENTIFIC_NAME_SCOPE = 'species_scientific_name';
