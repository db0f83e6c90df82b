import { createRequire } from 'node:module';
import path from 'node:path';
import type { Config, S3Config } from '#shared/config/config';
import type { BlobStore } from '#shared/blobStore/blobStore';
import { createLocalDiskBlobStore } from '#shared/blobStore/localDisk/createLocalDiskBlobStore';
import type { createS3BlobStore } from '#shared/blobStore/s3/createS3BlobStore';

/** Loads as CommonJS like this file (the build's output; tsx's require hook in a worker from sources). */
const loadModule = createRequire(__filename);

/** Plain data (it crosses into worker threads) naming the BlobStore the service is configured with. */
export type BlobSettings =
  | { readonly kind: 'local'; readonly rootDir: string; readonly directIo?: boolean }
  | { readonly kind: 's3'; readonly s3: S3Config };

/** The same choice as openInfrastructure makes. */
export function blobSettingsOf(config: Pick<Config, 's3' | 'dataDir' | 'blobDirectIo'>): BlobSettings {
  return config.s3
    ? { kind: 's3', s3: config.s3 }
    : { kind: 'local', rootDir: path.join(config.dataDir, 'blobs'), directIo: config.blobDirectIo };
}

/**
 * Opens the BlobStore in an inspection worker. The S3 client is loaded only where it is used: it
 * cost every worker on local disk ~0.2 s of CPU to start (~0.4 s under tsx), and a worker is
 * started for every 1,000 inspections.
 */
export function openBlobStore(settings: BlobSettings): BlobStore {
  if (settings.kind === 'local')
    return createLocalDiskBlobStore({ rootDir: settings.rootDir, directIo: settings.directIo ?? true });
  const s3 = loadModule('#shared/blobStore/s3/createS3BlobStore') as {
    createS3BlobStore: typeof createS3BlobStore;
  };
  return s3.createS3BlobStore(settings.s3);
}
