import type { Pool } from 'pg';
import type { Config } from '../../shared/config/config';
import type { BlobStore } from '../../shared/blobStore/blobStore';
import type { Infrastructure } from '../../shared/runtime/openInfrastructure';
import type { SearchReader } from '../../shared/search/searchIndex';
import { createPostgresSearchReader } from '../../shared/search/postgres/postgresSearchIndex';
import { UserLoader } from './features/account/userLoader';
import type { CachedReply } from './features/brains/brainLookups';
import type { BrainView, UploaderEmailVisibility } from '../../shared/views/brainViews';
import type { RequestContext } from '../../shared/http/routeSpec';
import type { ProjectionProgress } from '../../shared/projections/projectionProgress';
import { ChangeAwareCache } from '../../shared/query/changeAwareCache';
import { ReadModelPosition } from '../../shared/projections/readModelPosition';

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
  /** Where the read models are, for the caches below to know whether what they keep is current. */
  readonly readModelPosition: ReadModelPosition;
  /** Answers of the brains list per request, until anything a brain shows changes (LIST_CACHE_MB). */
  readonly brainPages: ChangeAwareCache<CachedReply>;
  /** Species ids per normalised scientific name, until a species changes. */
  readonly speciesIds: ChangeAwareCache<number[]>;
}

/** How brains are represented to this request's caller. */
export const brainViewFor = (deps: QueryDeps, ctx: RequestContext): BrainView => ({
  baseUrl: ctx.baseUrl,
  viewer: ctx.principal,
  uploaderEmails: deps.uploaderEmails,
});

export function createQueryDeps(
  config: Pick<Config, 'uploaderEmailVisibility' | 'listCacheBytes'>,
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
    readModelPosition: new ReadModelPosition(infra.readModels),
    brainCounts: new ChangeAwareCache(progress, {
      // A filter may name an atlas by slug or a category by name.
      dependsOn: (key) => /^(brain|atlas|category):/.test(key),
      maxEntries: 10_000,
    }),
    brainPages: new ChangeAwareCache(progress, {
      // Access tokens are the only read model nothing on a brain comes from.
      dependsOn: (key) => !key.startsWith('token:'),
      maxEntries: 100_000,
      maxWeight: config.listCacheBytes,
      weigh: (reply) => reply.json.length * 2,
    }),
    speciesIds: new ChangeAwareCache(progress, {
      dependsOn: (key) => key.startsWith('species:'),
      maxEntries: 1000,
    }),
  };
}
