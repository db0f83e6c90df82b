import { createHash } from 'node:crypto';
import { mkdir, open, rename, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { BlobTooLargeError, type PutOptions } from '#shared/blobStore/blobStore';
import { DEFAULT_CONTENT_TYPE } from '#shared/blobStore/defaultContentType';
import { assertMaxBytes } from '#shared/blobStore/hashingLimiter';
import { OffThreadSha256 } from '#shared/blobStore/offThreadSha256';
import { tempPathFor, type BlobPaths } from './blobPaths';
import {
  fsyncDirectory,
  openForDirectWrites,
  removeIfPresent,
  writeAllAt,
  writeFileDurably,
} from './durableFs';
import { BatchFiller } from './batchFiller';
import { PipelinedFileWrite } from './pipelinedFileWrite';
import type { BlobFileMeta } from './readBlobMeta';
import { markTempFilesInUse } from './tempFilesInUse';
import { putSmallBlob } from './smallBlobThreads';

/**
 * Streams body into a temp file next to the target, then renames it into place and flushes the
 * directories: the blob is complete and durable when this resolves, and absent when it rejects. A
 * body that ends within SMALL_BODY_BYTES is written whole by one job on a small-blob thread
 * (putSmallBlob), the same steps in one hand-off.
 */
export async function writeBlobFile(
  paths: BlobPaths,
  body: Readable,
  options: PutOptions,
  directIo: boolean,
): Promise<{ size: number; sha256: string }> {
  const tempData = tempPathFor(paths.data);
  const tempMeta = tempPathFor(paths.meta);
  const done = markTempFilesInUse([tempData, tempMeta]);
  const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
  assertMaxBytes(maxBytes);
  const contentType = options.contentType ?? DEFAULT_CONTENT_TYPE;
  const received = (body as AsyncIterable<Buffer | string>)[Symbol.asyncIterator]();
  let renamed = false;
  try {
    const head = await readHead(received, maxBytes);
    if (head.ended) {
      const { bytes, written } = wholeBody(head.chunks);
      const meta: BlobFileMeta = { contentType, ...written };
      await putSmallBlob({
        dir: paths.dir,
        data: paths.data,
        tempData,
        meta: paths.meta,
        tempMeta,
        bytes,
        metaText: JSON.stringify(meta),
      });
      return written;
    }
    const firstCreatedDir = await mkdir(paths.dir, { recursive: true });
    const written = await streamLargeIntoFile(
      followedBy(head.chunks, received),
      tempData,
      maxBytes,
      directIo,
    );
    const meta: BlobFileMeta = { contentType, ...written };
    await writeFileDurably(tempMeta, JSON.stringify(meta));
    // Sidecar first: a data file is never visible without its content type.
    await rename(tempMeta, paths.meta);
    renamed = true;
    await rename(tempData, paths.data);
    await fsyncNewEntries(paths.dir, firstCreatedDir);
    return written;
  } catch (err) {
    body.destroy();
    const leftovers = renamed ? [tempData, tempMeta, paths.data, paths.meta] : [tempData, tempMeta];
    // Cleanup is best effort; the caller needs the original error, not a cleanup one.
    await Promise.allSettled(leftovers.map(removeIfPresent));
    throw err;
  } finally {
    // Ends the body when the copy stopped before it did (the limit, a failed write).
    await received.return?.().catch(() => undefined);
    done();
  }
}

export interface StreamIntoFileOptions {
  /** The stream fails with BlobTooLargeError once more than this many bytes arrive. */
  readonly maxBytes?: number | undefined;
  /** Write whole batches with O_DIRECT where the file system allows (see PipelinedFileWrite). */
  readonly directIo: boolean;
}

/**
 * A body that ends within this many bytes is written with one write and hashed on the event loop
 * (microseconds at this size): a small file (a form's NIfTI, a preview) costs no second descriptor
 * for O_DIRECT, no batch of shared memory and no messages to and from the hashing thread, which
 * cost more than the hashing they saved.
 */
export const SMALL_BODY_BYTES = 64 * 1024;

/**
 * Streams body into a new file (created, never overwritten): size, SHA-256 and the file durable
 * when it resolves. The caller removes the file when it rejects.
 */
export async function streamIntoFile(
  body: Readable,
  file: string,
  options: StreamIntoFileOptions,
): Promise<{ size: number; sha256: string }> {
  const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
  assertMaxBytes(maxBytes);
  const received = (body as AsyncIterable<Buffer | string>)[Symbol.asyncIterator]();
  try {
    const head = await readHead(received, maxBytes);
    if (head.ended) return await writeSmallFile(file, head.chunks);
    return await streamLargeIntoFile(followedBy(head.chunks, received), file, maxBytes, options.directIo);
  } finally {
    // Ends the body when the copy stopped before it did (the limit, a failed write).
    await received.return?.();
  }
}

/** The body's first chunks, until it ends or passes SMALL_BODY_BYTES. */
async function readHead(
  received: AsyncIterator<Buffer | string>,
  maxBytes: number,
): Promise<{ chunks: Buffer[]; ended: boolean }> {
  const chunks: Buffer[] = [];
  for (let size = 0; size <= SMALL_BODY_BYTES;) {
    const next = await received.next();
    if (next.done) return { chunks, ended: true };
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
    size += chunk.length;
    if (size > maxBytes) throw new BlobTooLargeError(maxBytes);
    chunks.push(chunk);
  }
  return { chunks, ended: false };
}

async function* followedBy(
  head: readonly Buffer[],
  rest: AsyncIterator<Buffer | string>,
): AsyncGenerator<Buffer> {
  yield* head;
  for (let next = await rest.next(); !next.done; next = await rest.next())
    yield typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
}

/** A body that ended within SMALL_BODY_BYTES: its bytes in one buffer, their size and SHA-256. */
function wholeBody(chunks: readonly Buffer[]): {
  bytes: Buffer;
  written: { size: number; sha256: string };
} {
  const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  return { bytes, written: { size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') } };
}

async function writeSmallFile(
  file: string,
  chunks: readonly Buffer[],
): Promise<{ size: number; sha256: string }> {
  const { bytes, written } = wholeBody(chunks);
  const handle = await open(file, 'wx', 0o644);
  try {
    await writeAllAt(handle, bytes, 0);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return written;
}

async function streamLargeIntoFile(
  chunks: AsyncIterable<Buffer>,
  file: string,
  maxBytes: number,
  directIo: boolean,
): Promise<{ size: number; sha256: string }> {
  const handle = await open(file, 'wx', 0o644);
  let direct: FileHandle | undefined;
  // Hashed on another thread, each batch once it is on disk: the event loop only parses and copies.
  const hash = new OffThreadSha256();
  try {
    direct = directIo ? await openForDirectWrites(file) : undefined;
    const output = new PipelinedFileWrite(handle, hash, direct);
    let size: number;
    try {
      size = await copyIntoBatches(chunks, maxBytes, hash, output);
      await output.finish();
    } catch (error) {
      // Batch memory is reused once the session ends: no write may still be reading it.
      await output.quiesce();
      throw error;
    }
    return { size, sha256: await hash.digest() };
  } finally {
    hash.abort();
    await direct?.close();
    await handle.close();
  }
}

/**
 * Copies received chunks (64 KiB from a socket) into whole batches and appends each: one write per
 * batch, at offsets O_DIRECT accepts; only the last batch may be short. Fails with
 * BlobTooLargeError before copying a byte beyond maxBytes. Resolves with the size.
 *
 * It reads the body itself, where a SizeLimiter stage used to count: one stream stage less per
 * chunk is CPU the event loop, which receives the upload, no longer spends.
 */
async function copyIntoBatches(
  chunks: AsyncIterable<Buffer>,
  maxBytes: number,
  hash: OffThreadSha256,
  output: PipelinedFileWrite,
): Promise<number> {
  let size = 0;
  const batches = new BatchFiller(
    () => hash.batch(),
    (batch) => output.append(batch),
  );
  for await (const chunk of chunks) {
    size += chunk.length;
    if (size > maxBytes) throw new BlobTooLargeError(maxBytes);
    await batches.push(chunk);
  }
  await batches.flush();
  return size;
}

/** Flushes the blob's directory and, for directories mkdir just created, each parent holding one. */
async function fsyncNewEntries(dir: string, firstCreatedDir: string | undefined): Promise<void> {
  const dirs = [dir];
  if (firstCreatedDir !== undefined) {
    const last = path.dirname(firstCreatedDir);
    for (let current = dir; current !== last && current !== path.dirname(current);) {
      current = path.dirname(current);
      dirs.push(current);
    }
  }
  for (const each of dirs) await fsyncDirectory(each);
}
