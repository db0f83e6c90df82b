import path from 'node:path';
import type { Config, S3Config } from '#shared/config/config';
import type { BlobStore } from '#shared/blobStore/blobStore';
import { createLocalDiskBlobStore } from '#shared/blobStore/localDisk/createLocalDiskBlobStore';
import { createS3BlobStore } from '#shared/blobStore/s3/createS3BlobStore';

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

export function openBlobStore(settings: BlobSettings): BlobStore {
  return settings.kind === 's3'
    ? createS3BlobStore(settings.s3)
    : createLocalDiskBlobStore({ rootDir: settings.rootDir, directIo: settings.directIo ?? true });
}
