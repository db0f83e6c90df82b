import { createHash } from 'node:crypto';
import { truncate } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform, finished, pipeline } from 'node:stream';
import { DataStore, Upload } from '@tus/server';
import { type TusChecksum, checksumMismatch, currentTusChecksum } from './tusChecksum';
import { TusHttpError } from './tusHttpError';
import type { RunningUploadHashes } from './runningUploadHashes';
import { tusBlobKey } from './tusKeys';
import { type LocalTusWritten, writeTusBody } from './localTusWrite';
import { currentTusRequestBody, readRequestBody } from './tusRequestBody';

export interface BlobKeyedDataStoreOptions {
  readonly expirationMs: number;
  /**
   * Cuts the bytes stored under `key` back to `length` (the local file store): a body failing its
   * checksum is written, then undone. Absent (S3, where parts cannot be taken back): a body with a
   * checksum is held in memory, at most checksumBufferMaxBytes, and stored only once it matches.
   */
  readonly truncate?: (key: string, length: number) => Promise<void>;
  readonly checksumBufferMaxBytes: number;
  /**
   * The local file store's files (blob keys are paths below `root`): PATCH bodies are written by
   * writeTusBody (batches, O_DIRECT, hashed off-thread) rather than the file store's stream.
   */
  readonly localFiles?: { readonly root: string; readonly directIo: boolean };
  /** Follows the SHA-256 of uploads whose bytes come through this process in order. */
  readonly hashes?: RunningUploadHashes;
  /** Before an upload is created (S3: the bucket exists). */
  readonly beforeCreate?: () => Promise<void>;
  /** After an upload's bytes are removed (termination, expiry): forgets its row. */
  readonly afterRemove?: (id: string) => Promise<void>;
}

const checksumBodyTooLarge = (max: number) =>
  new TusHttpError(413, {
    detail: `A request with Upload-Checksum may carry at most ${max} bytes on this server.`,
  });

/**
 * A tus data store (@tus/file-store or @tus/s3-store) whose uploads, known to tus by their UUID,
 * are stored under their blob key (uploads/tus/<uuid>): the finished upload is the blob, with no
 * copy. Adds the checksum extension; no deferred length (an upload states its size at creation, so
 * MAX_UPLOAD_BYTES is enforced before any byte).
 */
export class BlobKeyedDataStore extends DataStore {
  constructor(
    private readonly inner: DataStore,
    private readonly options: BlobKeyedDataStoreOptions,
  ) {
    super();
    this.extensions = ['creation', 'creation-with-upload', 'termination', 'expiration', 'checksum'];
  }

  override async create(upload: Upload): Promise<Upload> {
    await this.options.beforeCreate?.();
    const stored = await this.inner.create(new Upload({ ...upload, id: tusBlobKey(upload.id) }));
    upload.storage = stored.storage;
    return upload;
  }

  override async getUpload(id: string): Promise<Upload> {
    const stored = await this.inner.getUpload(tusBlobKey(id));
    return new Upload({ ...stored, id });
  }

  override async remove(id: string): Promise<void> {
    await this.removeBytes(id);
    await this.options.afterRemove?.(id);
  }

  /** The upload's bytes and tus state, keeping its row (expiry leaves a tombstone). */
  async removeBytes(id: string): Promise<void> {
    this.options.hashes?.forget(id);
    await this.inner.remove(tusBlobKey(id));
  }

  override async write(stream: Readable, id: string, offset: number): Promise<number> {
    if (this.options.localFiles) return this.writeLocal(stream, id, offset, this.options.localFiles);
    const key = tusBlobKey(id);
    const tap = this.options.hashes?.tap(id, offset);
    const source = tap ? pipeline(stream, tap, () => undefined) : stream;
    const checksum = currentTusChecksum();
    if (!checksum) return this.inner.write(source, key, offset);
    const { truncate: cut } = this.options;
    if (!cut) {
      try {
        return await this.inner.write(await this.verifiedInMemory(source, checksum), key, offset);
      } catch (error) {
        this.options.hashes?.forget(id);
        throw error;
      }
    }
    const hash = createHash(checksum.algorithm);
    const checksumTap = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        done(null, chunk);
      },
    });
    const newOffset = await this.inner.write(
      pipeline(source, checksumTap, () => undefined),
      key,
      offset,
    );
    if (!hash.digest().equals(checksum.expected)) {
      this.options.hashes?.forget(id);
      await cut(key, offset);
      throw checksumMismatch();
    }
    return newOffset;
  }

  private async writeLocal(
    stream: Readable,
    id: string,
    offset: number,
    files: NonNullable<BlobKeyedDataStoreOptions['localFiles']>,
  ): Promise<number> {
    const file = path.join(files.root, ...tusBlobKey(id).split('/'));
    const checksum = currentTusChecksum();
    const request = currentTusRequestBody();
    const direct = request?.claim();
    // tus ends `stream` (then only a stand-in) when it aborts the request: reading stops there.
    const stop = new AbortController();
    const stopWatching = direct ? finished(stream, () => stop.abort()) : undefined;
    if (direct) stream.resume();
    let written: LocalTusWritten;
    try {
      const room = direct ? await this.roomAt(id, offset, direct) : 0;
      written = await writeTusBody(
        direct ? (take) => readRequestBody(direct, stop.signal, room, take) : stream,
        file,
        offset,
        {
          directIo: files.directIo,
          hash: this.options.hashes?.follow(id, offset),
          checksum: checksum?.algorithm,
        },
      );
    } catch (error) {
      this.options.hashes?.forget(id);
      throw error;
    } finally {
      stopWatching?.();
      if (direct) request?.done();
    }
    if (checksum && !written.checksum?.equals(checksum.expected)) {
      this.options.hashes?.forget(id);
      await truncate(file, offset);
      throw checksumMismatch();
    }
    return offset + written.bytes;
  }

  /**
   * The most bytes a request body may carry from `offset` (what tus's StreamLimiter allowed): its
   * Content-Length, which tus checked against the upload's size and Node's parser holds the body
   * to; the rest of the upload for a chunked body.
   */
  private async roomAt(id: string, offset: number, request: Readable): Promise<number> {
    const length = (request as Readable & { headers?: Record<string, unknown> }).headers?.['content-length'];
    if (typeof length === 'string' && /^\d+$/.test(length)) return Number(length);
    const { size } = await this.getUpload(id);
    return size === undefined ? 0 : size - offset;
  }

  override getExpiration(): number {
    return this.options.expirationMs;
  }

  override declareUploadLength(): Promise<void> {
    return Promise.reject(new Error('deferred upload length is not offered'));
  }

  private async verifiedInMemory(stream: Readable, checksum: TusChecksum): Promise<Readable> {
    const max = this.options.checksumBufferMaxBytes;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > max) {
        stream.destroy();
        throw checksumBodyTooLarge(max);
      }
      chunks.push(chunk);
    }
    const body = Buffer.concat(chunks, size);
    if (!createHash(checksum.algorithm).update(body).digest().equals(checksum.expected))
      throw checksumMismatch();
    return Readable.from([body]);
  }
}

/** The local disk's truncate for BlobKeyedDataStore: blob keys are paths below the blob root. */
export function localTruncate(blobRoot: string): (key: string, length: number) => Promise<void> {
  return (key, length) => truncate(path.join(blobRoot, ...key.split('/')), length);
}
