/** Events of the `atlas-<id>` stream. */
export type AtlasCreated = {
  readonly type: 'AtlasCreated';
  readonly data: {
    readonly atlasId: number;
    readonly name: string;
    /** Lowercase, URL-safe, unique (a reservation), derived from the name and version. */
    readonly slug: string;
    readonly description: string;
    readonly speciesId: number;
    readonly isOfficial: boolean;
    readonly verified: boolean;
    readonly version: string;
    /** `#rrggbb`, or "" when none was given. */
    readonly color: string;
    readonly publicationUrl: string;
    readonly createdBy: number;
    readonly createdAt: string;
  };
};

export type AtlasEvent = AtlasCreated;

export type AtlasState =
  | { readonly status: 'none' }
  | {
      readonly status: 'created';
      readonly atlasId: number;
      readonly slug: string;
      readonly speciesId: number;
    };

export const initialAtlasState = (): AtlasState => ({ status: 'none' });

export function evolveAtlas(_state: AtlasState, event: AtlasEvent): AtlasState {
  switch (event.type) {
    case 'AtlasCreated':
      return {
        status: 'created',
        atlasId: event.data.atlasId,
        slug: event.data.slug,
        speciesId: event.data.speciesId,
      };
  }
}

export const atlasDecider = { initialState: initialAtlasState, evolve: evolveAtlas };
export const atlasStreamName = (atlasId: number): string => `atlas-${atlasId}`;
/** Reservation scope that keeps atlas slugs unique. */
export const ATLAS_SLUG_SCOPE = 'atlas_slug';
