import type { BlobStore } from '#shared/blobStore/blobStore';
import { type EventStore, afterRollback } from '#shared/eventStore/eventStore';

/**
 * Runs the work that records a file already stored under `key` (none: just runs it). The file is
 * deleted when the work fails, and when the unit of work it ran in (Idempotency-Key) rolls back
 * later: no bytes outlive the record they were stored for.
 */
export async function withStoredFile<T>(
  deps: { readonly store: EventStore; readonly blobs: BlobStore },
  key: string | undefined,
  work: () => Promise<T>,
): Promise<T> {
  if (key === undefined) return work();
  const discard = (): Promise<void> => deps.blobs.delete(key).catch(() => undefined);
  let result: T;
  try {
    result = await work();
  } catch (error) {
    await discard();
    throw error;
  }
  afterRollback(deps.store, discard);
  return result;
}
