import type { Pool } from 'pg';
import type { BlobStore } from '../../shared/blobStore/blobStore';
import type { Infrastructure } from '../../shared/runtime/openInfrastructure';
import { UserLoader } from './features/account/userLoader';

/** Everything a query handler may use; wired once per process by createQueryDeps. */
export interface QueryDeps {
  readonly readModels: Pool;
  readonly blobs: BlobStore;
  readonly users: UserLoader;
}

export function createQueryDeps(infra: Infrastructure): QueryDeps {
  return { readModels: infra.readModels, blobs: infra.blobs, users: new UserLoader(infra.readModels) };
}
