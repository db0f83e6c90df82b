import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { Client, type ClientOptions } from 'minio';
import { createS3BlobStore, type S3BlobStoreOptions } from '#shared/blobStore/s3/createS3BlobStore';
import { describeBlobStoreContract } from './blobStore.contract';

/** The slice of s3rver's API used here; the package ships no type declarations. */
interface S3rverServer {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
type S3rverOptions = { address: string; port: number; silent: boolean; directory: string };
// eslint-disable-next-line @typescript-eslint/no-require-imports -- untyped package, typed just above
const S3rver = require('s3rver') as new (options: S3rverOptions) => S3rverServer;

const PART_SIZE = 5 * 1024 * 1024;
let s3rverDir: string;
let s3rver: S3rverServer;
let s3rverOptions: S3BlobStoreOptions;

beforeAll(async () => {
  s3rverDir = await mkdtemp(path.join(tmpdir(), 's3rver-'));
  s3rver = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3rverDir });
  const { port } = await s3rver.run();
  // s3rver checks SigV4 signatures against these fixed credentials.
  s3rverOptions = {
    endPoint: '127.0.0.1',
    port,
    useSSL: false,
    accessKey: 'S3RVER',
    secretKey: 'S3RVER',
    bucket: 'contract-blobs',
    partSize: PART_SIZE,
  };
});

afterAll(async () => {
  await s3rver.close();
  await rm(s3rverDir, { recursive: true, force: true });
});

async function objectsUnder(options: ClientOptions, bucket: string, prefix: string): Promise<string[]> {
  const names: string[] = [];
  for await (const item of new Client(options).listObjectsV2(bucket, `${prefix}/`, true)) {
    names.push(String((item as { name?: string }).name));
  }
  return names;
}

async function incompleteUploadsUnder(
  options: ClientOptions,
  bucket: string,
  prefix: string,
): Promise<string[]> {
  const keys: string[] = [];
  for await (const upload of new Client(options).listIncompleteUploads(bucket, `${prefix}/`, true)) {
    keys.push(`incomplete upload of ${upload.key}`);
  }
  return keys;
}

// s3rver implements neither ListMultipartUploads nor AbortMultipartUpload, so here leftovers are
// the objects only; against a real endpoint (below) incomplete uploads are checked too.
describeBlobStoreContract('S3 adapter on s3rver', {
  create: () => createS3BlobStore(s3rverOptions),
  leftovers: (prefix) => objectsUnder(s3rverOptions, s3rverOptions.bucket, prefix),
  largeBodyBytes: PART_SIZE,
});

describe('S3 adapter specifics on s3rver', () => {
  test('the bucket is created on first use, and ping then answers', async () => {
    const store = createS3BlobStore({ ...s3rverOptions, bucket: 'created-on-first-use' });
    await store.ping();
    expect(await new Client(s3rverOptions).bucketExists('created-on-first-use')).toBe(true);
  });

  test('a presigned GET URL serves the bytes without credentials', async () => {
    const store = createS3BlobStore(s3rverOptions);
    await store.put('presigned/hello.txt', Readable.from([Buffer.from('hello, brain')]), {
      contentType: 'text/plain',
    });

    const response = await fetch(await store.presignedGetUrl('presigned/hello.txt', 60));

    expect(response.status).toBe(200);
    expect(await response.text()).toBe('hello, brain');
  });

  test('ping fails when the endpoint does not answer', async () => {
    const store = createS3BlobStore({ ...s3rverOptions, port: 1 });
    await expect(store.ping()).rejects.toThrow();
  });

  test('a part size below the S3 minimum is refused at construction', () => {
    expect(() => createS3BlobStore({ ...s3rverOptions, partSize: 1024 })).toThrow(RangeError);
  });
});

/** A real S3/MinIO endpoint when S3_ENDPOINT is set (e.g. the compose stack's MinIO). */
function realEndpointFromEnv(): S3BlobStoreOptions | undefined {
  const { S3_ENDPOINT, S3_PORT, S3_USE_SSL, S3_ACCESS_KEY, S3_SECRET_KEY, S3_BUCKET, S3_REGION } =
    process.env;
  if (!S3_ENDPOINT || !S3_ACCESS_KEY || !S3_SECRET_KEY) return undefined;
  return {
    endPoint: S3_ENDPOINT,
    port: S3_PORT ? Number(S3_PORT) : undefined,
    useSSL: S3_USE_SSL === 'true',
    accessKey: S3_ACCESS_KEY,
    secretKey: S3_SECRET_KEY,
    bucket: S3_BUCKET ?? 'blobstore-contract',
    region: S3_REGION,
    partSize: PART_SIZE,
  };
}

/** An incomplete multipart upload of one part, as a put killed mid-way leaves it. */
async function leaveIncompleteUpload(options: S3BlobStoreOptions, prefix: string) {
  const client = new Client(options);
  const key = `${prefix}/killed.bin`;
  const uploadID = await client.initiateNewMultipartUpload(options.bucket, key, {});
  const sendPart = (partNumber: number) =>
    client.uploadPart(
      { bucketName: options.bucket, objectName: key, uploadID, partNumber, headers: {} },
      randomBytes(3000),
    );
  await sendPart(1);
  return { touch: () => sendPart(2).then(() => undefined) };
}

const realEndpoint = realEndpointFromEnv();
if (realEndpoint) {
  describeBlobStoreContract(`S3 adapter on ${realEndpoint.endPoint}`, {
    create: () => createS3BlobStore(realEndpoint),
    leftovers: async (prefix) => [
      ...(await objectsUnder(realEndpoint, realEndpoint.bucket, prefix)),
      ...(await incompleteUploadsUnder(realEndpoint, realEndpoint.bucket, prefix)),
    ],
    largeBodyBytes: PART_SIZE,
    leaveLeftover: (prefix) => leaveIncompleteUpload(realEndpoint, prefix),
  });
} else {
  console.info(
    'skipped: BlobStore contract on a real S3/MinIO endpoint (set S3_ENDPOINT, S3_ACCESS_KEY, S3_SECRET_KEY, optionally S3_PORT, S3_USE_SSL, S3_BUCKET, S3_REGION)',
  );
}
