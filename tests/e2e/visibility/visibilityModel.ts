import {
  type CollaboratorRole,
  type Viewer,
  type Visibility,
  canSeeBrain,
  effectiveVisibility,
} from '#shared/domain/brains/visibility';

/*
 * The reference model of the property test: what the catalogue holds (brains, their placement,
 * visibility and collaborators, their file uploads) and what the rule (canSeeBrain, the one in
 * shared/domain) says each caller must get back from each read route. It is written from
 * decisions.md ("Visibility and collaborators") and the issue, never from the server's code.
 */

export interface ModelUser {
  readonly key: string;
  readonly id: number;
  readonly username: string;
  readonly email: string;
  readonly token: string;
  readonly isStaff: boolean;
}

/** A caller: a user, or anonymous (null). */
export type Caller = ModelUser | null;

export interface Placement {
  readonly category: { readonly id: number; readonly name: string };
  readonly species: { readonly id: number; readonly scientific_name: string; readonly name: string } | null;
  readonly atlas: { readonly id: number; readonly slug: string; readonly name: string } | null;
}

export interface ModelBrain {
  readonly id: number;
  readonly readableId: string;
  readonly name: string;
  readonly uploaderId: number;
  readonly placement: Placement;
  readonly uploadId: string;
  visibility: Visibility;
  embargoUntil: string | null;
  verified: boolean;
  readonly collaborators: Map<number, CollaboratorRole>;
}

export interface BrainFilter {
  readonly atlas?: number;
  readonly species?: number;
  readonly category?: number;
  readonly uploader?: number;
  readonly verified?: boolean;
  readonly visibility?: Visibility;
  /** A word the name contains (the search words are chosen so that nothing else matches them). */
  readonly search?: string;
}

export const viewerOfCaller = (caller: Caller): Viewer =>
  caller ? { userId: caller.id, isStaff: caller.isStaff } : { userId: null, isStaff: false };

export class CatalogueModel {
  readonly brains = new Map<number, ModelBrain>();
  readonly deleted: ModelBrain[] = [];

  constructor(
    readonly users: readonly ModelUser[],
    readonly placements: readonly Placement[],
  ) {}

  live(): ModelBrain[] {
    return [...this.brains.values()];
  }

  sees(brain: ModelBrain, caller: Caller, nowMs: number): boolean {
    return canSeeBrain(
      {
        visibility: brain.visibility,
        embargoUntil: brain.embargoUntil,
        uploaderId: brain.uploaderId,
        collaboratorIds: [...brain.collaborators.keys()],
      },
      viewerOfCaller(caller),
      nowMs,
    );
  }

  /** The brains a caller may see at `nowMs` that pass the filter, newest first (the lists' default order). */
  listed(caller: Caller, filter: BrainFilter, nowMs: number): ModelBrain[] {
    return this.live()
      .filter((b) => this.sees(b, caller, nowMs) && matches(b, filter, nowMs))
      .sort((x, y) => y.id - x.id);
  }

  /** The user (or null) a brain's file upload may be read by: its uploader, staff, the brain's collaborators. */
  readsUpload(brain: ModelBrain, caller: Caller): boolean {
    if (!caller) return false;
    return caller.isStaff || caller.id === brain.uploaderId || brain.collaborators.has(caller.id);
  }
}

export function matches(b: ModelBrain, filter: BrainFilter, nowMs: number): boolean {
  const { placement } = b;
  if (filter.atlas !== undefined && placement.atlas?.id !== filter.atlas) return false;
  if (filter.species !== undefined && placement.species?.id !== filter.species) return false;
  if (filter.category !== undefined && placement.category.id !== filter.category) return false;
  if (filter.uploader !== undefined && b.uploaderId !== filter.uploader) return false;
  if (filter.verified !== undefined && b.verified !== filter.verified) return false;
  if (filter.visibility !== undefined && effectiveVisibility(b, nowMs) !== filter.visibility) return false;
  if (filter.search !== undefined && !b.name.toLowerCase().includes(filter.search.toLowerCase()))
    return false;
  return true;
}

export type FacetCounts = Record<'species' | 'atlas' | 'category' | 'verified', Record<string, number>>;

/** The facets of decisions.md: matching brains per value (brains without an atlas: not under atlas or species). */
export function facetsOf(brains: readonly ModelBrain[]): FacetCounts {
  const facets: FacetCounts = { species: {}, atlas: {}, category: {}, verified: {} };
  const add = (facet: keyof FacetCounts, key: string) => (facets[facet][key] = (facets[facet][key] ?? 0) + 1);
  for (const b of brains) {
    if (b.placement.atlas) {
      add('atlas', String(b.placement.atlas.id));
      if (b.placement.species) add('species', String(b.placement.species.id));
    }
    add('category', String(b.placement.category.id));
    add('verified', String(b.verified));
  }
  return facets;
}

/** Facets as the server answers them, as counts per id (or per value for verified), zero counts left out. */
export function facetCountsOfBody(body: unknown): FacetCounts {
  const facets = (body ?? {}) as Record<
    string,
    { id?: number; value?: boolean; count: number }[] | undefined
  >;
  const counts = (name: keyof FacetCounts): Record<string, number> =>
    Object.fromEntries(
      (facets[name] ?? [])
        .filter((entry) => entry.count !== 0)
        .map((entry) => [String(name === 'verified' ? entry.value : entry.id), entry.count]),
    );
  return {
    species: counts('species'),
    atlas: counts('atlas'),
    category: counts('category'),
    verified: counts('verified'),
  };
}
