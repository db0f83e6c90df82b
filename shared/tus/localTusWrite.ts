import { type FileHandle, open } from 'node:fs/promises';
import { BatchFiller } from '#shared/blobStore/localDisk/batchFiller';
import { openForDirectWrites, writeAllAt } from '#shared/blobStore/localDisk/durableFs';
import { DIRECT_IO_ALIGNMENT, OffThreadSha256, directWritable } from '#shared/blobStore/offThreadSha256';
import type { TakeChunk } from './tusRequestBody';

/** Batch memory of the hashing thread: filled here, written, then handed over to be hashed. */
export interface BatchHash {
  batch(): Buffer | Promise<Buffer>;
  handOver(batch: Buffer): Promise<void>;
}

/**
 * A body that gives its chunks to `take`, in order, waiting whenever `take` returns a promise, and
 * resolves once it has given the last one (readRequestBody).
 */
export type ChunkSource = (take: TakeChunk) => Promise<void>;

export interface LocalTusWriteOptions {
  /** Write whole aligned batches with O_DIRECT where the file system allows. */
  readonly directIo: boolean;
  /** Follows the upload's SHA-256 (RunningUploadHashes); absent: the batches are hashed for nothing. */
  readonly hash?: BatchHash | undefined;
  /** Sees every chunk as it arrives (the checksum extension's digest). */
  readonly onChunk?: ((chunk: Buffer) => void) | undefined;
}

/**
 * Writes a tus PATCH body into the upload's file (which @tus/file-store created) at `offset`, the way
 * the multipart path writes a blob (shared/blobStore/localDisk/writeBlobFile): received chunks are
 * copied (memcpy) into 4 MiB batches of the hashing thread's shared memory, each batch written
 * while the next one is received, with O_DIRECT from its own memory where aligned (a resumed PATCH
 * at an odd offset writes a short first batch to reach the alignment), then hashed on the hashing
 * thread in order, with no further copy. The file store's own write went through fs.WriteStream
 * in 64 KiB writes, each through the page cache.
 *
 * Writes go one at a time, in order (the batches received meanwhile go together in the next one,
 * a single writev, so a slow disk gets fewer, larger writes): the file never grows past a byte
 * that is not there, so its size, which is the upload's offset for tus, stays exact whenever the
 * process stops. A written group is handed to the hashing thread while the next one is written:
 * the disk never waits for the hashing thread (niced, it lags on a busy machine), only the body
 * does, once MAX_HELD_BATCHES are held. A body that ends early is written to its last byte received.
 * The bytes and the size are flushed (fdatasync) before it resolves: what the PATCH acknowledges
 * is durable.
 * Resolves with the bytes written; on a failure, waits for the write in flight, then rejects (the
 * file then ends at a batch boundary: its size is still the offset).
 */
export async function writeTusBody(
  body: ChunkSource | AsyncIterable<Buffer | string>,
  file: string,
  offset: number,
  options: LocalTusWriteOptions,
): Promise<number> {
  const own = options.hash ? undefined : new OffThreadSha256();
  const hash: BatchHash = options.hash ?? {
    batch: () => own!.batch(),
    handOver: (batch) => own!.update(batch),
  };
  const handle = await open(file, 'r+');
  let direct: FileHandle | undefined;
  let position = offset;
  /** Full batches waiting for the write in flight; written together, in one writev, after it. */
  let queued: Buffer[] = [];
  let writing: Promise<void> | undefined;
  /** Batches in the write in flight, and written ones not yet handed to the hashing thread. */
  let inWrite = 0;
  let unhashed = 0;
  /** The hand-over of written batches to the hash, in order, beside the next write. */
  let hashing: Promise<void> = Promise.resolve();
  let failure: Error | undefined;
  const fail = (error: unknown): void => {
    failure ??= error instanceof Error ? error : new Error(String(error));
  };
  const writeGroup = async (group: Buffer[], at: number): Promise<void> => {
    if (direct && at % DIRECT_IO_ALIGNMENT === 0 && group.every(directWritable)) {
      try {
        return await writeAllOf(direct, group, at);
      } catch (error) {
        // EINVAL: the file system takes O_DIRECT at open but not these writes: the page cache then.
        if ((error as NodeJS.ErrnoException).code !== 'EINVAL') throw error;
        const refused = direct;
        direct = undefined;
        await refused.close();
      }
    }
    await writeAllOf(handle, group, at);
  };
  const handOver = (group: Buffer[]): void => {
    unhashed += group.length;
    hashing = hashing.then(async () => {
      for (const batch of group) {
        if (failure === undefined) await hash.handOver(batch).catch(fail);
        unhashed -= 1;
      }
    });
  };
  const startWriting = (): void => {
    if (queued.length === 0 || failure !== undefined) return void (writing = undefined);
    const group = queued;
    queued = [];
    const at = position;
    for (const batch of group) position += batch.length;
    inWrite = group.length;
    writing = writeGroup(group, at).then(
      () => {
        inWrite = 0;
        handOver(group);
        startWriting();
      },
      (error: unknown) => {
        inWrite = 0;
        fail(error);
        writing = undefined;
      },
    );
  };
  const append = async (batch: Buffer): Promise<void> => {
    queued.push(batch);
    if (!writing) startWriting();
    // Waits for what frees batches: the write in flight, else the hand-over to the hash.
    while (failure === undefined && queued.length + inWrite + unhashed >= MAX_HELD_BATCHES)
      await (writing ?? hashing);
    if (failure !== undefined) throw failure;
  };
  const drain = async (): Promise<void> => {
    while (writing) await writing;
    await hashing;
    if (failure !== undefined) throw failure;
  };
  try {
    direct = options.directIo ? await openForDirectWrites(file) : undefined;
    const misaligned = offset % DIRECT_IO_ALIGNMENT;
    const batches = new BatchFiller(() => hash.batch(), append);
    if (misaligned !== 0) batches.limitNextBatch(DIRECT_IO_ALIGNMENT - misaligned);
    // A chunk that fits the batch being filled is copied at once, with no promise (pushSync).
    const take = (chunk: Buffer): Promise<void> | undefined => {
      options.onChunk?.(chunk);
      return batches.pushSync(chunk);
    };
    if (typeof body === 'function') await body(take);
    else
      for await (const received of body)
        await take(typeof received === 'string' ? Buffer.from(received) : received);
    await batches.flush();
    await drain();
    // The offset this PATCH answers (the file's size) survives a power loss, not only a crash.
    if (position > offset) await handle.datasync();
    return position - offset;
  } finally {
    // Batch memory is reused once handed back: no write may still be reading it.
    while (writing) await writing;
    await hashing;
    own?.abort();
    await direct?.close();
    await handle.close();
  }
}

/**
 * Full batches waiting for a write, being written, or written and waiting for the hashing thread,
 * before the body waits: with the one being filled and the two the hashing thread may be behind
 * by, the 8 of one arena of batch memory.
 */
const MAX_HELD_BATCHES = 5;

/** Writes `group` at `at` in one writev; what a short write left, batch by batch. */
async function writeAllOf(
  target: Pick<FileHandle, 'write' | 'writev'>,
  group: Buffer[],
  at: number,
): Promise<void> {
  const { bytesWritten } = await target.writev(group, at);
  let start = at;
  for (const batch of group) {
    const done = Math.min(Math.max(bytesWritten - (start - at), 0), batch.length);
    if (done < batch.length) await writeAllAt(target, batch.subarray(done), start + done);
    start += batch.length;
  }
}
