import path from 'node:path';
import type { Config } from '#shared/config/config';
import type { Logger } from '#shared/logging/logger';
import type { Infrastructure } from '#shared/platform/openInfrastructure';
import type { UploadReceived } from '#shared/domain/uploads/events';
import { createCommandDeps } from '#services/command-api/commandDeps';
import { ensureStarterCatalogue, ensureUploaders } from './starterCatalogue';
import { type SyntheticAppend, type SyntheticPlan, syntheticBrainAppends } from './syntheticBrains';
import { blobLinker, storeVariants, syntheticBlobKey, type StoredVariant } from './syntheticFiles';
import { writeSyntheticBrains, type WrittenBrains } from './writeSyntheticBrains';

/** Uploads spread over the ten years before now, one every `count`-th of them, oldest first. */
const SPAN_MS = 10 * 365 * 24 * 3600 * 1000;
/** Links or puts of one chunk's blobs in flight at once. */
const PLACE_CONCURRENCY = 64;

export interface SyntheticSeedOptions {
  readonly count: number;
  /** Called after each chunk with the brains written so far. */
  readonly onProgress?: (written: number) => void;
  readonly clock?: () => Date;
}

/**
 * `npm run seed -- --synthetic N`: N brains filed under the starter catalogue's real species and
 * atlases (created first if missing), uploaded by 200 synthetic researchers, each with its own
 * tiny NIfTI file already processed (metadata and preview as the processor would have written),
 * appended through the EventStore port in bulk. Ids follow those already taken; a second run adds N
 * more brains with fresh ids and names.
 */
export async function runSyntheticSeed(
  config: Config,
  infra: Infrastructure,
  logger: Logger,
  options: SyntheticSeedOptions,
): Promise<WrittenBrains> {
  const clock = options.clock ?? (() => new Date());
  const deps = createCommandDeps(config, infra, infra.store, logger, clock);
  const placements = await ensureStarterCatalogue(deps, config.admin);
  const uploaders = await ensureUploaders(deps);
  const variants = await storeVariants(infra.blobs);
  const bySha = new Map(variants.map((v) => [v.sha256, v]));
  const linker = blobLinker(infra.blobs, config.s3 ? undefined : path.join(config.dataDir, 'blobs'));
  const end = clock().getTime();
  const step = Math.max(1, Math.floor(SPAN_MS / Math.max(1, options.count)));
  const plan: SyntheticPlan = {
    placements,
    uploaders,
    files: variants,
    blobKeyOf: syntheticBlobKey,
    verifiedShare: 0.3,
    privateShare: 0.03,
    createdAt: (index) => new Date(end - SPAN_MS + index * step),
    processorId: 'seed-synthetic',
  };
  const placeBlobs = async (appends: readonly SyntheticAppend[]): Promise<void> => {
    const uploads = appends.flatMap(({ events }) =>
      events.filter((e) => e.type === 'UploadReceived').map((e) => e.data as UploadReceived['data']),
    );
    for (let i = 0; i < uploads.length; i += PLACE_CONCURRENCY)
      await Promise.all(
        uploads
          .slice(i, i + PLACE_CONCURRENCY)
          .map((u) => linker.place(u.uploadId, bySha.get(u.sha256) as StoredVariant)),
      );
  };
  return writeSyntheticBrains(infra.store, {
    count: options.count,
    // createdAt follows the run's order, so a run's brains span the ten years evenly.
    generate: (first, last, index) => syntheticBrainAppends(plan, first, last, index),
    beforeWrite: placeBlobs,
    onProgress: options.onProgress,
  });
}
