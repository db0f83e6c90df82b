import type { Pool } from 'pg';
import type { Config } from '../../shared/config/config';
import type { BlobStore } from '../../shared/blobStore/blobStore';
import type { Infrastructure } from '../../shared/runtime/openInfrastructure';
import type { SearchReader } from '../../shared/search/searchIndex';
import { createPostgresSearchReader } from '../../shared/search/postgres/postgresSearchIndex';
import { UserLoader } from './features/account/userLoader';
import type { BrainView, UploaderEmailVisibility } from '../../shared/views/brainViews';
import type { RequestContext } from '../../shared/http/routeSpec';
import type { ProjectionProgress } from '../../shared/projections/projectionProgress';
import { ChangeAwareCache } from '../../shared/query/changeAwareCache';

/** Everything a query handler may use; wired once per process by createQueryDeps. */
export interface QueryDeps {
  readonly readModels: Pool;
  readonly blobs: BlobStore;
  readonly users: UserLoader;
  /** The brains list's `search` and `facets` (SEARCH_BACKEND). */
  readonly search: SearchReader;
  /** UPLOADER_EMAIL_VISIBILITY: who sees an uploader's email on brains. */
  readonly uploaderEmails: UploaderEmailVisibility;
  /** Brain counts per list filter (X-Total-Count), until a brain changes. */
  readonly brainCounts: ChangeAwareCache<number>;
  /** Species ids per normalised scientific name, until a species changes. */
  readonly speciesIds: ChangeAwareCache<number[]>;
}

/** A change is reported at once; the TTL bounds a change missed while a listener reconnected. */
const CACHE_TTL_MS = 2000;

/** How brains are represented to this request's caller. */
export const brainViewFor = (deps: QueryDeps, ctx: RequestContext): BrainView => ({
  baseUrl: ctx.baseUrl,
  viewer: ctx.principal,
  uploaderEmails: deps.uploaderEmails,
});

export function createQueryDeps(
  config: Pick<Config, 'uploaderEmailVisibility'>,
  infra: Infrastructure,
  progress: ProjectionProgress,
  search: SearchReader = createPostgresSearchReader({ pool: infra.readModels }),
): QueryDeps {
  return {
    readModels: infra.readModels,
    blobs: infra.blobs,
    users: new UserLoader(infra.readModels),
    search,
    uploaderEmails: config.uploaderEmailVisibility,
    brainCounts: new ChangeAwareCache(progress, {
      // A filter may name an atlas by slug or a category by name.
      dependsOn: (key) => /^(brain|atlas|category):/.test(key),
      ttlMs: CACHE_TTL_MS,
      maxEntries: 10_000,
    }),
    speciesIds: new ChangeAwareCache(progress, {
      dependsOn: (key) => key.startsWith('species:'),
      ttlMs: CACHE_TTL_MS,
      maxEntries: 1000,
    }),
  };
}
