import type { Pool } from 'pg';
import type { BlobStore } from '../../shared/blobStore/blobStore';
import type { UserLoader } from './features/account/userLoader';

/** Everything a query handler may use; wired once in main.ts. */
export interface QueryDeps {
  readonly readModels: Pool;
  readonly blobs: BlobStore;
  readonly users: UserLoader;
}
