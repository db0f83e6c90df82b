/**
 * The SearchIndex port: brains denormalised for search, kept by the projector, read by the brains
 * list. Two adapters implement it: PostgreSQL full text + trigram (shared/search/postgres) and
 * Elasticsearch (shared/search/elasticsearch). Both pass tests/contract/searchIndex.contract.ts.
 *
 * Writes are idempotent by event position: a document remembers the position of the event that
 * last wrote it, and a write carrying an older or equal position changes nothing. A removal leaves a
 * tombstone with its position, so a stale upsert replayed after it does not bring the brain back.
 */
import type { GlobalPosition } from '#shared/eventStore/eventStore';
import type { Viewer, Visibility } from '#shared/domain/brains/visibility';

export interface BrainSearchDocument {
  readonly brainId: number;
  readonly readableId: string;
  readonly name: string;
  readonly description: string;
  readonly speciesId: number | null;
  readonly speciesName: string | null;
  readonly scientificName: string | null;
  readonly atlasId: number | null;
  readonly atlasName: string | null;
  readonly categoryId: number;
  readonly categoryName: string;
  readonly verified: boolean;
  readonly uploaderId: number;
  readonly dateUploaded: Date;
  /** As stored: an embargo whose time has passed stays `embargoed` here, and reads as public. */
  readonly visibility: Visibility;
  /** Set while embargoed (kept after the embargo is lifted); null otherwise. */
  readonly embargoUntil: Date | null;
  /**
   * Who may see the brain whatever its visibility (staff aside): its uploader and its
   * collaborators' user ids, whatever their role. The rule (shared/domain/brains/visibility
   * canSeeBrain) then reads the document alone: public in effect, or the viewer is a reader.
   */
  readonly readers: readonly number[];
}

export interface SearchUpsert {
  readonly document: BrainSearchDocument;
  /** Position of the event this version of the document reflects. */
  readonly position: GlobalPosition;
}

export interface SearchRemoval {
  readonly brainId: number;
  readonly position: GlobalPosition;
}

export interface SearchWriter {
  upsert(entries: readonly SearchUpsert[]): Promise<void>;
  remove(entries: readonly SearchRemoval[]): Promise<void>;
}

export type SearchFacet = 'species' | 'atlas' | 'category' | 'verified';

export interface SearchFilters {
  readonly speciesIds?: readonly number[];
  readonly atlasIds?: readonly number[];
  readonly categoryIds?: readonly number[];
  readonly verified?: boolean;
  readonly uploaderId?: number;
  /**
   * Who asks: every answer (ids, total, facets) holds only the brains this viewer may see
   * (canSeeBrain, embargo ends by the index's clock at query time). Absent: no rule, for internal
   * callers only; the brains list always gives it.
   */
  readonly viewer?: Viewer;
  /** Effective visibility, applied after the rule: an embargo whose time has passed is `public`. */
  readonly visibility?: Visibility;
}

export type SearchSortField = 'date_uploaded' | 'id' | 'name' | 'readable_id';

/** `name` orders case-insensitively; the highest brain id always breaks the remaining ties. */
export interface SearchSort {
  readonly field: SearchSortField;
  readonly descending: boolean;
}

export interface SearchQuery {
  /**
   * Matches name, description, readable_id, species (name, scientific name), atlas and category
   * names, a name with a typo, and an exact numeric id. Blank means no text: newest first.
   */
  readonly text?: string;
  /** Combine with AND; a list matches any of its values. */
  readonly filters?: SearchFilters;
  readonly limit: number;
  readonly offset: number;
  /** An explicit order, which wins over relevance (with text) and recency (without). */
  readonly sort?: readonly SearchSort[];
  /** Counts per value under the text AND the filters. */
  readonly facets?: readonly SearchFacet[];
}

export interface FacetCount {
  /** An id, or a boolean for `verified`. Documents without a value (no atlas) are not counted. */
  readonly value: number | boolean;
  readonly count: number;
}

export type SearchFacets = Partial<Record<SearchFacet, readonly FacetCount[]>>;

export interface SearchResult {
  /** Exact number of matching documents. */
  readonly total: number;
  /** Brain ids of the page: `sort` if given, else best match first with text, else newest first (then highest id). */
  readonly ids: readonly number[];
  readonly facets?: SearchFacets;
}

/**
 * A new index built beside the live one: the live one answers queries until `finish` swaps the new
 * one in (atomically) and drops the old one.
 */
export interface SearchRebuild extends SearchWriter {
  finish(): Promise<void>;
  /** Throws the half-built index away; the live one stays. */
  abandon(): Promise<void>;
}

export interface QueryOptions {
  readonly signal?: AbortSignal;
}

/** The query side alone (the brains list). */
export type SearchReader = Pick<SearchIndex, 'query'>;

export interface SearchIndex extends SearchWriter {
  /** Creates whatever is missing; safe to run at every start and from several processes. */
  install(): Promise<void>;
  /** `signal`: the asker is gone (RequestContext.signal); the query may stop and reject with its reason. */
  query(query: SearchQuery, options?: QueryOptions): Promise<SearchResult>;
  /** Starts a rebuild, discarding any earlier unfinished one. */
  beginRebuild(): Promise<SearchRebuild>;
}
