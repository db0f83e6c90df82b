import { createHash } from 'node:crypto';
import { pipeline, type Readable } from 'node:stream';
import type { Client } from 'minio';
import type { PutOptions, PutResult } from '#shared/blobStore/blobStore';
import { DEFAULT_CONTENT_TYPE } from '#shared/blobStore/defaultContentType';
import { HashingLimiter } from '#shared/blobStore/hashingLimiter';
import { inParts, type Part } from './inParts';

/** S3's limit on parts per multipart upload. */
const MAX_PARTS = 10_000;

export interface S3Target {
  readonly client: Client;
  readonly bucket: string;
  readonly partSize: number;
  /** Upload ids of the multipart uploads being sent (the sweep leaves them alone). */
  readonly sending: Set<string>;
}

/**
 * Streams body into one object. A body that fits in one part is sent with a single PutObject;
 * a longer one goes up as a multipart upload, one part in memory at a time. minio's own
 * putObject is not used for unknown sizes: it buffers parts of ~0.5 GiB, resumes any earlier
 * unfinished upload of the same key, and never settles if the body stream errors.
 * On failure nothing is left: the multipart upload is aborted and a possibly written object removed.
 */
export async function putS3Object(
  target: S3Target,
  key: string,
  body: Readable,
  options: PutOptions = {},
): Promise<PutResult> {
  const limiter = new HashingLimiter(options.maxBytes);
  // Errors of either stream surface through iterating the limiter; the callback has nothing to add.
  pipeline(body, limiter, () => undefined);
  const headers = { 'Content-Type': options.contentType ?? DEFAULT_CONTENT_TYPE };
  const upload = new PartUploads(target, key, headers);
  try {
    await upload.send(inParts(limiter, target.partSize));
    return { key, ...limiter.result() };
  } catch (err) {
    body.destroy();
    limiter.destroy();
    await upload.discard();
    throw err;
  } finally {
    upload.forget();
  }
}

class PartUploads {
  private uploadId: string | undefined;
  /** The multipart upload this put began, kept after it completes (until forget). */
  private startedId: string | undefined;
  private finalRequestSent = false;

  constructor(
    private readonly target: S3Target,
    private readonly key: string,
    private readonly headers: Record<string, string>,
  ) {}

  async send(parts: AsyncIterable<Part>): Promise<void> {
    const etags: { part: number; etag: string }[] = [];
    for await (const { data, last } of parts) {
      if (last && this.uploadId === undefined) return this.putWhole(data);
      if (data.length > 0) etags.push(await this.sendPart(etags.length + 1, data));
      if (last) return this.complete(etags);
    }
  }

  /** Its multipart upload, if any, is no longer being sent. */
  forget(): void {
    if (this.startedId !== undefined) this.target.sending.delete(this.startedId);
  }

  /** Best effort: the caller's error matters more than a failed cleanup (a bucket lifecycle rule is the backstop). */
  async discard(): Promise<void> {
    const { client, bucket } = this.target;
    if (this.uploadId !== undefined)
      await client.abortMultipartUpload(bucket, this.key, this.uploadId).catch(() => undefined);
    if (this.finalRequestSent) await client.removeObject(bucket, this.key).catch(() => undefined);
  }

  private async putWhole(data: Buffer): Promise<void> {
    this.finalRequestSent = true;
    await this.target.client.putObject(this.target.bucket, this.key, data, data.length, this.headers);
  }

  private async sendPart(partNumber: number, data: Buffer): Promise<{ part: number; etag: string }> {
    const { client, bucket, partSize } = this.target;
    if (partNumber > MAX_PARTS) throw new Error(`object larger than ${MAX_PARTS} parts of ${partSize} bytes`);
    if (this.uploadId === undefined) {
      this.uploadId = await client.initiateNewMultipartUpload(bucket, this.key, this.headers);
      this.startedId = this.uploadId;
      this.target.sending.add(this.uploadId);
    }
    const md5 = createHash('md5').update(data).digest('base64');
    const headers = { 'Content-MD5': md5 };
    const { etag } = await client.uploadPart(
      { bucketName: bucket, objectName: this.key, uploadID: this.uploadId, partNumber, headers },
      data,
    );
    return { part: partNumber, etag };
  }

  private async complete(etags: { part: number; etag: string }[]): Promise<void> {
    if (this.uploadId === undefined) throw new Error('multipart upload completed before it started');
    this.finalRequestSent = true;
    await this.target.client.completeMultipartUpload(this.target.bucket, this.key, this.uploadId, etags);
    this.uploadId = undefined;
  }
}
