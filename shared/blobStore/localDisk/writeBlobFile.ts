import { mkdir, open, rename } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { PutOptions } from '../blobStore';
import { DEFAULT_CONTENT_TYPE } from '../defaultContentType';
import { SizeLimiter } from '../hashingLimiter';
import { OffThreadSha256, batchBuffer } from '../offThreadSha256';
import { tempPathFor, type BlobPaths } from './blobPaths';
import { fsyncDirectory, removeIfPresent, writeFileDurably } from './durableFs';
import { PipelinedFileWrite } from './pipelinedFileWrite';
import type { BlobFileMeta } from './readBlobMeta';

/**
 * Streams body into a temp file next to the target, then renames it into place and flushes the
 * directories: the blob is complete and durable when this resolves, and absent when it rejects.
 */
export async function writeBlobFile(
  paths: BlobPaths,
  body: Readable,
  options: PutOptions,
): Promise<{ size: number; sha256: string }> {
  const tempData = tempPathFor(paths.data);
  const tempMeta = tempPathFor(paths.meta);
  let renamed = false;
  try {
    const firstCreatedDir = await mkdir(paths.dir, { recursive: true });
    const written = await streamIntoFile(body, tempData, options.maxBytes);
    const meta: BlobFileMeta = { contentType: options.contentType ?? DEFAULT_CONTENT_TYPE, ...written };
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
  }
}

const READ_AHEAD_BYTES = 1024 * 1024;
/** Received chunks (64 KiB from a socket) are copied into batches of about this size: one write each. */
const WRITE_BATCH_BYTES = 1024 * 1024;

/**
 * Streams body into a new file (created, never overwritten): size, SHA-256 and the file durable
 * when it resolves. The caller removes the file when it rejects.
 */
export async function streamIntoFile(
  body: Readable,
  file: string,
  maxBytes: number | undefined,
): Promise<{ size: number; sha256: string }> {
  const handle = await open(file, 'wx', 0o644);
  // Hashed on another thread, each batch once it is on disk: the event loop only parses and copies.
  const hash = new OffThreadSha256();
  const output = new PipelinedFileWrite(handle, hash);
  try {
    // Up to 1 MiB may wait while the writes are at their limit, so the upload keeps being received.
    const limiter = new SizeLimiter(maxBytes, READ_AHEAD_BYTES);
    await pipeline(body, limiter, async (source: AsyncIterable<Buffer>) => {
      let batch: Buffer[] = [];
      let batchBytes = 0;
      for await (const chunk of source) {
        batch.push(chunk);
        batchBytes += chunk.length;
        if (batchBytes < WRITE_BATCH_BYTES) continue;
        await output.append(batchBuffer(batch, batchBytes));
        batch = [];
        batchBytes = 0;
      }
      if (batchBytes > 0) await output.append(batchBuffer(batch, batchBytes));
    });
    await output.finish();
    return { size: limiter.size, sha256: await hash.digest() };
  } catch (error) {
    hash.abort();
    await output.quiesce();
    throw error;
  } finally {
    await handle.close();
  }
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
