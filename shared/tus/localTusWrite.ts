import { type FileHandle, open } from 'node:fs/promises';
import { BatchFiller } from '#shared/blobStore/localDisk/batchFiller';
import { openForDirectWrites } from '#shared/blobStore/localDisk/durableFs';
import { DIRECT_IO_ALIGNMENT, OffThreadFileWrite, OffThreadSha256 } from '#shared/blobStore/offThreadSha256';
import type { TusChecksumAlgorithm } from './tusChecksum';
import type { TakeChunk } from './tusRequestBody';

/** The running hash of an upload (RunningUploadHashes) that the bytes written go to, in order. */
export interface FollowedHash {
  /** The hashing thread's session the written bytes are hashed into. */
  session(): OffThreadSha256 | Promise<OffThreadSha256>;
  /** `bytes` more of the upload were handed to it. */
  advance(bytes: number): void;
}

/**
 * A body that gives its chunks to `take`, in order, waiting whenever `take` returns a promise, and
 * resolves once it has given the last one (readRequestBody).
 */
export type ChunkSource = (take: TakeChunk) => Promise<void>;

export interface LocalTusWriteOptions {
  /** Write whole aligned batches with O_DIRECT where the file system allows. */
  readonly directIo: boolean;
  /** Follows the upload's SHA-256 (RunningUploadHashes); absent: the bytes are only written. */
  readonly hash?: FollowedHash | undefined;
  /** The checksum extension's algorithm: the body's digest is computed too (on the hashing thread). */
  readonly checksum?: TusChecksumAlgorithm | undefined;
}

export interface LocalTusWritten {
  /** Bytes written, from the offset. */
  readonly bytes: number;
  /** The body's digest with `checksum`'s algorithm. */
  readonly checksum: Buffer | undefined;
}

/**
 * Writes a tus PATCH body into the upload's file (which @tus/file-store created) at `offset`:
 * received chunks are copied (memcpy) into 4 MiB batches of the hashing thread's shared memory, and
 * the hashing thread writes them (OffThreadFileWrite), with O_DIRECT from their own memory where
 * aligned (a resumed PATCH at an odd offset writes a short first batch to reach the alignment), and
 * hashes them into the upload's running SHA-256 and the body's Upload-Checksum digest, with no
 * further copy. The event loop, which receives every byte, only copies: it neither starts the
 * writes (each waited for it before, and the disk with it, while it was busy receiving) nor hashes.
 *
 * The writes go one at a time, in order (batches received meanwhile together in the next writev):
 * the file never grows past a byte that is not there, so its size, which is the upload's offset for
 * tus, stays exact whenever the process stops. At most six batches are held (handed over, not yet
 * written and hashed) before the body waits. A body that ends early is written to its last byte
 * received. The bytes and the size are flushed (fdatasync) before it resolves: what the PATCH
 * acknowledges is durable. On a failure (the body's, or a write's: nothing after a failed write is
 * written), it waits for the writes handed over to end, then rejects: the file's size is still the
 * offset of the bytes it has.
 */
export async function writeTusBody(
  body: ChunkSource | AsyncIterable<Buffer | string>,
  file: string,
  offset: number,
  options: LocalTusWriteOptions,
): Promise<LocalTusWritten> {
  const handle = await open(file, 'r+');
  let direct: FileHandle | undefined;
  let checksum: OffThreadSha256 | undefined;
  let write: OffThreadFileWrite | undefined;
  try {
    direct = options.directIo ? await openForDirectWrites(file) : undefined;
    const followed = options.hash ? await options.hash.session() : undefined;
    checksum = options.checksum ? new OffThreadSha256(options.checksum) : undefined;
    const hashes = [followed, checksum].filter((hash): hash is OffThreadSha256 => hash !== undefined);
    const fileWrite = (write = new OffThreadFileWrite(handle.fd, direct?.fd, hashes));
    let position = offset;
    const batches = new BatchFiller(
      () => fileWrite.batch(),
      (batch) => {
        const at = position;
        position += batch.length;
        options.hash?.advance(batch.length);
        return fileWrite.write(batch, at);
      },
    );
    const misaligned = offset % DIRECT_IO_ALIGNMENT;
    if (misaligned !== 0) batches.limitNextBatch(DIRECT_IO_ALIGNMENT - misaligned);
    // A chunk that fits the batch being filled is copied at once, with no promise (pushSync).
    const take = (chunk: Buffer): Promise<void> | undefined => batches.pushSync(chunk);
    if (typeof body === 'function') await body(take);
    else
      for await (const received of body)
        await take(typeof received === 'string' ? Buffer.from(received) : received);
    await batches.flush();
    const bytes = await fileWrite.finish();
    // The offset this PATCH answers (the file's size) survives a power loss, not only a crash.
    if (bytes > 0) await handle.datasync();
    return { bytes, checksum: checksum && Buffer.from(await checksum.digest(), 'hex') };
  } finally {
    // The descriptors close only once no write on the hashing thread may still use them.
    await write?.finish().catch(() => undefined);
    checksum?.abort();
    await direct?.close();
    await handle.close();
  }
}
