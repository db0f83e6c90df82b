import type { Pool } from 'pg';
import type { BlobStore } from '#shared/blobStore/blobStore';
import type { EventStore, GlobalPosition } from '#shared/eventStore/eventStore';
import type { Logger } from '#shared/logging/logger';
import { abortableSleep } from '#shared/runtime/abortableSleep';
import { tusUploadIdOfKey } from '#shared/tus/tusKeys';
import { tusUploadIds } from '#shared/tus/tusUploadsTable';
import { referencedBlobKeys } from './referencedBlobKeys';
import { settledHeadPosition } from './settledHeadPosition';

/**
 * Where the catalogue stores blobs (uploads/<uuid>, previews/<upload id>.png, avatars/<user>/<uuid>,
 * categories/<uuid>). Nothing outside them is ever taken for an orphan: a bucket shared with other
 * data loses none of it, and a new kind of blob is kept until it is added here with its records.
 */
export const SWEPT_PREFIXES = ['uploads/', 'previews/', 'avatars/', 'categories/'] as const;

export interface BlobSweepTimings {
  /** A leftover untouched for this long is no write in progress (of another process: this one's are known). */
  readonly leftoverGraceMs: number;
  /**
   * A blob stored longer ago than this with no record naming it is an orphan. Longer than any
   * put takes to be followed by the commit of the event naming its blob (an S3 blob's age runs
   * from the start of its upload).
   */
  readonly orphanGraceMs: number;
  /** How long a sweep waits for the read models to reach the event store before it leaves orphans to the next. */
  readonly catchUpTimeoutMs: number;
}

export interface BlobSweepDeps {
  readonly blobs: BlobStore;
  /** The read models' database. */
  readonly pool: Pool;
  readonly store: Pick<EventStore, 'headPosition'>;
  readonly logger: Pick<Logger, 'debug' | 'warn'>;
  readonly now: () => Date;
}

export interface Removed {
  count: number;
  bytes: number;
}

export interface BlobSweepReport {
  readonly leftovers: Removed;
  readonly orphans: Removed;
  /** False when the read models did not catch up in time: no blob was taken for an orphan. */
  readonly orphansChecked: boolean;
  /** Removals that failed (logged); the next sweep tries again. */
  readonly failures: number;
}

/**
 * One sweep: leftovers untouched for the grace period, then blobs under SWEPT_PREFIXES stored
 * before the grace period that no record names. Safe against lagging read models because a blob
 * is stored before the event that names it is appended, and that event commits within the grace
 * period: so every record naming a blob old enough to be swept committed before this sweep began,
 * and the keys are read only once the read models have applied every event committed by then
 * (settledHeadPosition). A record added later can only name a younger blob.
 */
export async function sweepBlobStore(
  deps: BlobSweepDeps,
  timings: BlobSweepTimings,
  signal: AbortSignal,
): Promise<BlobSweepReport> {
  const startedAt = deps.now().getTime();
  const report = {
    leftovers: { count: 0, bytes: 0 },
    orphans: { count: 0, bytes: 0 },
    orphansChecked: false,
    failures: 0,
  };
  const attempt = async (what: Record<string, unknown>, remove: () => Promise<boolean>): Promise<boolean> => {
    try {
      return await remove();
    } catch (error) {
      report.failures++;
      deps.logger.warn('blob sweep could not remove', { ...what, error: String(error) });
      return false;
    }
  };

  // A tus upload (uploads/tus/, shared/tus) is its row's while it has one: in progress (an S3
  // multipart upload, a growing file) or finished, until tus expiration forgets it.
  const tusUploads = await tusUploadIds(deps.pool);
  const isTusUploads = (key: string): boolean => {
    const id = tusUploadIdOfKey(key);
    return id !== undefined && tusUploads.has(id);
  };
  const leftoverCutoff = startedAt - timings.leftoverGraceMs;
  for await (const leftover of deps.blobs.listLeftovers()) {
    if (signal.aborted) return report;
    if (leftover.touchedAt.getTime() >= leftoverCutoff) continue;
    if (isTusUploads(leftover.id.split(':')[0]!)) continue;
    if (await attempt({ leftover: leftover.id }, () => deps.blobs.removeLeftover(leftover))) {
      deps.logger.debug('blob sweep removed a leftover', { leftover: leftover.id, bytes: leftover.size });
      count(report.leftovers, leftover.size);
    }
  }

  const deadline = Date.now() + timings.catchUpTimeoutMs;
  const head = await settledHeadPosition(deps.pool, deps.store, deadline, signal);
  const referenced = head && (await referencedUntil(deps.pool, head, deadline, signal));
  if (!referenced || signal.aborted) return report;
  // Read after the records: a tus upload finished since is named by its row (kept after completion).
  for (const id of await tusUploadIds(deps.pool)) tusUploads.add(id);
  report.orphansChecked = true;
  const orphanCutoff = startedAt - timings.orphanGraceMs;
  for (const prefix of SWEPT_PREFIXES) {
    for await (const blob of deps.blobs.list(prefix)) {
      if (signal.aborted) return report;
      if (blob.storedAt.getTime() >= orphanCutoff || referenced.has(blob.key) || isTusUploads(blob.key))
        continue;
      const deleted = await attempt({ blob_key: blob.key }, () =>
        deps.blobs.delete(blob.key).then(() => true),
      );
      if (deleted) {
        deps.logger.debug('blob sweep removed an orphaned blob', { blob_key: blob.key, bytes: blob.size });
        count(report.orphans, blob.size);
      }
    }
  }
  return report;
}

const CATCH_UP_POLL_MS = 250;

async function referencedUntil(
  pool: Pool,
  head: GlobalPosition,
  deadline: number,
  signal: AbortSignal,
): Promise<Set<string> | undefined> {
  for (;;) {
    const keys = await referencedBlobKeys(pool, head);
    if (keys || signal.aborted || Date.now() >= deadline) return keys;
    await abortableSleep(CATCH_UP_POLL_MS, signal);
  }
}

function count(removed: Removed, bytes: number): void {
  removed.count++;
  removed.bytes += bytes;
}
