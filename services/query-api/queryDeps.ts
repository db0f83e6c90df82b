import type { Pool } from 'pg';
import type { BlobStore } from '../../shared/blobStore/blobStore';
import type { Infrastructure } from '../../shared/runtime/openInfrastructure';
import type { SearchReader } from '../../shared/search/searchIndex';
import { createPostgresSearchReader } from '../../shared/search/postgres/postgresSearchIndex';
import { UserLoader } from './features/account/userLoader';

/** Everything a query handler may use; wired once per process by createQueryDeps. */
export interface QueryDeps {
  readonly readModels: Pool;
  readonly blobs: BlobStore;
  readonly users: UserLoader;
  /** The brains list's `search` and `facets` (SEARCH_BACKEND). */
  readonly search: SearchReader;
}

export function createQueryDeps(
  infra: Infrastructure,
  search: SearchReader = createPostgresSearchReader({ pool: infra.readModels }),
): QueryDeps {
  return {
    readModels: infra.readModels,
    blobs: infra.blobs,
    users: new UserLoader(infra.readModels),
    search,
  };
}
