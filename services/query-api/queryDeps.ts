import type { Pool } from 'pg';
import type { Config } from '#shared/config/config';
import type { BlobStore } from '#shared/blobStore/blobStore';
import type { Logger } from '#shared/logging/logger';
import type { EventStore } from '#shared/eventStore/eventStore';
import type { Infrastructure } from '#shared/platform/openInfrastructure';
import type { SearchReader, SearchResult } from '#shared/search/searchIndex';
import { createPostgresSearchReader } from '#shared/search/postgres/postgresSearchIndex';
import { UserLoader } from './features/accounts/userLoader';
import type { BrainView, UploaderEmailVisibility } from '#shared/views/brainViews';
import type { RequestContext } from '#shared/http/routeSpec';
import type { ProjectionProgress } from '#shared/projections/projectionProgress';
import { ChangeAwareCache } from '#shared/query/changeAwareCache';
import { StreamCache, withStreamCache } from '#shared/audit/replay/streamCache';
import { ReadModelPosition } from '#shared/projections/readModelPosition';
import { EmbargoClock } from '#shared/query/embargoClock';
import { type Viewer, viewerOf } from '#shared/domain/brains/visibility';

/** A list answer as kept by QueryDeps.brainPages: serialised once. */
export interface CachedReply {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly json: string;
}

/** Everything a query handler may use; wired once per process by createQueryDeps. */
export interface QueryDeps {
  readonly readModels: Pool;
  /**
   * The event store, read by the audit replays (history and as_of), never appended to here; its
   * streams' events are kept once read (StreamCache, REPLAY_CACHE_MB).
   */
  readonly store: EventStore;
  readonly blobs: BlobStore;
  /** For what fails after an answer has begun (an export cut mid-stream): nothing else can report it. */
  readonly logger: Logger;
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
  /**
   * Rankings of text searches (their pages are slices of one query). Absent when no answer that
   * went through the search index may be kept: the cache is off, or the index is Elasticsearch,
   * which shows a write at its next refresh, after the change was reported, so an answer kept
   * meanwhile would outlive the change. Only the search projection commits with its checkpoint.
   */
  readonly searchRankings: ChangeAwareCache<SearchResult> | undefined;
  /** Species ids per normalised scientific name, until a species changes. */
  readonly speciesIds: ChangeAwareCache<number[]>;
  /**
   * When the next embargo ends: every kept answer that applies the visibility rule (the three
   * brain caches above) is dropped then, on every instance, with no write needed.
   */
  readonly embargoes: EmbargoClock;
}

/** Who asks, as the visibility rule sees them (shared/domain/brains/visibility). */
export const viewerFor = (ctx: RequestContext): Viewer => viewerOf(ctx.principal);

/** How brains are represented to this request's caller. */
export const brainViewFor = (deps: QueryDeps, ctx: RequestContext): BrainView => ({
  baseUrl: ctx.baseUrl,
  viewer: ctx.principal,
  uploaderEmails: deps.uploaderEmails,
});

/** Access tokens are the only read model nothing on a brain, or in the search index, comes from. */
const showsOnBrains = (changeKey: string): boolean => !changeKey.startsWith('token:');

export function createQueryDeps(
  config: Pick<Config, 'uploaderEmailVisibility' | 'listCacheBytes' | 'replayCacheBytes' | 'searchBackend'>,
  infra: Infrastructure,
  progress: ProjectionProgress,
  logger: Logger,
  search: SearchReader = createPostgresSearchReader({ pool: infra.readModels }),
): QueryDeps {
  const embargoes = new EmbargoClock(infra.readModels, progress);
  const expiresAt = (now: Parameters<EmbargoClock['nextEnd']>[0]): Promise<number> => embargoes.nextEnd(now);
  return {
    embargoes,
    readModels: infra.readModels,
    store: withStreamCache(infra.store, new StreamCache(infra.store, { maxBytes: config.replayCacheBytes })),
    blobs: infra.blobs,
    logger,
    users: new UserLoader(infra.readModels),
    search,
    uploaderEmails: config.uploaderEmailVisibility,
    readModelPosition: new ReadModelPosition(infra.readModels),
    brainCounts: new ChangeAwareCache(progress, {
      // A filter may name an atlas by slug or a category by name.
      dependsOn: (key) => /^(brain|atlas|category):/.test(key),
      maxEntries: 10_000,
      expiresAt,
    }),
    brainPages: new ChangeAwareCache(progress, {
      dependsOn: showsOnBrains,
      maxEntries: 100_000,
      maxWeight: config.listCacheBytes,
      weigh: (reply) => reply.json.length * 2,
      expiresAt,
    }),
    searchRankings:
      config.searchBackend !== 'postgres' || config.listCacheBytes === 0
        ? undefined
        : new ChangeAwareCache(progress, {
            dependsOn: showsOnBrains,
            maxEntries: 10_000,
            maxWeight: config.listCacheBytes,
            weigh: (ranking) => 8 * ranking.ids.length + 1024,
            expiresAt,
          }),
    speciesIds: new ChangeAwareCache(progress, {
      dependsOn: (key) => key.startsWith('species:'),
      maxEntries: 1000,
    }),
  };
}
