import type { Readable } from 'node:stream';
import { Client } from 'minio';
import { BlobNotFoundError, type BlobInfo, type BlobStore } from '#shared/blobStore/blobStore';
import { assertValidBlobKey } from '#shared/blobStore/blobKey';
import { assertValidRange, rangeNotSatisfiable, type ByteRange } from '#shared/blobStore/byteRange';
import { DEFAULT_CONTENT_TYPE } from '#shared/blobStore/defaultContentType';
import { putS3Object, type S3Target } from './putS3Object';
import { s3ErrorCode } from './s3ErrorCode';
import { ListingClient, listS3Blobs, listS3Leftovers, removeS3Leftover } from './s3Listing';

export interface S3BlobStoreOptions {
  readonly endPoint: string;
  readonly port?: number;
  readonly useSSL: boolean;
  readonly accessKey: string;
  readonly secretKey: string;
  readonly bucket: string;
  readonly region?: string;
  /** Bytes per multipart part, held in memory once per upload in flight. S3's minimum is 5 MiB. */
  readonly partSize?: number;
  /** When set, downloads are answered with presigned URLs instead of being proxied by the service. */
  readonly presignedDownloads?: PresignedDownloadOptions;
}

export interface PresignedDownloadOptions {
  /** How long a URL stays valid; S3 allows at most 7 days. */
  readonly expirySeconds: number;
  /**
   * The address clients reach the store at, when it differs from the service's (a signature covers
   * the host, so the URL is signed for this one). Absent: the service's own endpoint.
   */
  readonly publicEndpoint?: { readonly endPoint: string; readonly port?: number; readonly useSSL: boolean };
}

export interface S3BlobStore extends BlobStore {
  /** A URL anyone can GET the blob from until it expires (S3 caps expiry at 7 days). */
  presignedGetUrl(key: string, expirySeconds: number): Promise<string>;
}

/** 8 MiB parts allow objects up to 80 GB (S3 takes at most 10,000 parts). */
const DEFAULT_PART_SIZE = 8 * 1024 * 1024;
const MIN_PART_SIZE = 5 * 1024 * 1024;
const NOT_FOUND = new Set(['NoSuchKey', 'NotFound']);
/** minio's default, and what a store without regions (MinIO, s3rver) accepts. */
const DEFAULT_REGION = 'us-east-1';

/** BlobStore on an S3-compatible object store (MinIO, AWS S3) through the official minio client. */
export function createS3BlobStore(options: S3BlobStoreOptions): S3BlobStore {
  const partSize = options.partSize ?? DEFAULT_PART_SIZE;
  if (!(partSize >= MIN_PART_SIZE)) throw new RangeError(`partSize must be at least ${MIN_PART_SIZE} bytes`);
  const client = new ListingClient({
    endPoint: options.endPoint,
    port: options.port,
    useSSL: options.useSSL,
    accessKey: options.accessKey,
    secretKey: options.secretKey,
    region: options.region,
  });
  const { bucket } = options;
  // Multipart uploads this process is sending: never listed as leftovers.
  const sending = new Set<string>();
  const target: S3Target = { client, bucket, partSize, sending };
  const ensureBucket = bucketEnsurer(client, bucket, options.region);

  const store: S3BlobStore = {
    async put(key, body, putOptions) {
      try {
        assertValidBlobKey(key);
        await ensureBucket();
      } catch (err) {
        body.destroy();
        throw err;
      }
      return putS3Object(target, key, body, putOptions);
    },
    async stat(key) {
      assertValidBlobKey(key);
      await ensureBucket();
      return statObject(client, bucket, key);
    },
    async get(key, range) {
      assertValidBlobKey(key);
      if (range) assertValidRange(range);
      await ensureBucket();
      return getObject(client, bucket, key, range);
    },
    async delete(key) {
      assertValidBlobKey(key);
      await ensureBucket();
      await client.removeObject(bucket, key);
    },
    async *list(prefix) {
      await ensureBucket();
      yield* listS3Blobs(client, bucket, prefix);
    },
    async *listLeftovers() {
      await ensureBucket();
      yield* listS3Leftovers(client, bucket, sending);
    },
    async removeLeftover(leftover) {
      await ensureBucket();
      return removeS3Leftover(client, bucket, sending, leftover);
    },
    async ping() {
      await ensureBucket();
      // Asked every time: the memoized ensureBucket alone would not notice the store going away.
      if (!(await client.bucketExists(bucket))) throw new Error(`bucket ${bucket} does not exist`);
    },
    async presignedGetUrl(key, expirySeconds) {
      assertValidBlobKey(key);
      return client.presignedGetObject(bucket, key, expirySeconds);
    },
  };
  if (options.presignedDownloads)
    store.presignedDownloadUrl = downloadSigner(options, options.presignedDownloads);
  return store;
}

const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

/**
 * Signs GET URLs for the public endpoint. The region is fixed, so minio computes the signature
 * locally: creating a URL never contacts the store (nor the public address, which the service
 * itself may not reach).
 */
function downloadSigner(
  options: S3BlobStoreOptions,
  presign: PresignedDownloadOptions,
): NonNullable<BlobStore['presignedDownloadUrl']> {
  const { expirySeconds } = presign;
  if (!Number.isInteger(expirySeconds) || expirySeconds < 1 || expirySeconds > MAX_PRESIGN_SECONDS)
    throw new RangeError(`expirySeconds must be an integer from 1 to ${MAX_PRESIGN_SECONDS}`);
  const endpoint = presign.publicEndpoint ?? options;
  const signer = new Client({
    endPoint: endpoint.endPoint,
    port: endpoint.port,
    useSSL: endpoint.useSSL,
    accessKey: options.accessKey,
    secretKey: options.secretKey,
    region: options.region ?? DEFAULT_REGION,
  });
  return async (key, download) => {
    assertValidBlobKey(key);
    return signer.presignedGetObject(options.bucket, key, expirySeconds, {
      'response-content-disposition': download.contentDisposition,
      'response-content-type': download.contentType,
    });
  };
}

/**
 * Creates the bucket on first use rather than at construction, so a service starts while the
 * object store is still coming up; a failed attempt is retried by the next call.
 */
function bucketEnsurer(client: Client, bucket: string, region: string | undefined): () => Promise<void> {
  let ready: Promise<void> | undefined;
  const ensure = async () => {
    if (await client.bucketExists(bucket)) return;
    try {
      await client.makeBucket(bucket, region);
    } catch (err) {
      // Another instance may have created it between the check and the call.
      if (s3ErrorCode(err) !== 'BucketAlreadyOwnedByYou') throw err;
    }
  };
  return () => {
    ready ??= ensure().catch((err: unknown) => {
      ready = undefined;
      throw err;
    });
    return ready;
  };
}

async function statObject(client: Client, bucket: string, key: string): Promise<BlobInfo | undefined> {
  try {
    const stat = await client.statObject(bucket, key);
    const contentType: unknown = stat.metaData['content-type'];
    return {
      key,
      size: stat.size,
      contentType: typeof contentType === 'string' ? contentType : DEFAULT_CONTENT_TYPE,
    };
  } catch (err) {
    if (NOT_FOUND.has(s3ErrorCode(err) ?? '')) return undefined;
    throw err;
  }
}

async function getObject(
  client: Client,
  bucket: string,
  key: string,
  range: ByteRange | undefined,
): Promise<Readable> {
  try {
    if (!range) return await client.getObject(bucket, key);
    // minio reads a length of 0 as "to the end".
    const length = range.end === undefined ? 0 : range.end - range.start + 1;
    return await client.getPartialObject(bucket, key, range.start, length);
  } catch (err) {
    const code = s3ErrorCode(err);
    if (NOT_FOUND.has(code ?? '')) throw new BlobNotFoundError(key);
    if (code === 'InvalidRange' && range) throw rangeNotSatisfiable(range);
    throw err;
  }
}
