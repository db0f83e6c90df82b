import { type FileHandle, open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { openForDirectWrites, writeAllAt } from '#shared/blobStore/localDisk/durableFs';
import { DIRECT_IO_ALIGNMENT, OffThreadSha256, directWritable } from '#shared/blobStore/offThreadSha256';

/** Batch memory of the hashing thread: filled here, written, then handed over to be hashed. */
export interface BatchHash {
  batch(): Buffer | Promise<Buffer>;
  handOver(batch: Buffer): Promise<void>;
}

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
 * that is not there, so its
 * size, which is the upload's offset for tus, stays exact whenever the process stops. A body that
 * ends early (tus ends it when the client goes away) is written to its last byte received.
 * Resolves with the bytes written; on a failure, waits for the write in flight, then rejects (the
 * file then ends at a batch boundary: its size is still the offset).
 */
export async function writeTusBody(
  body: Readable,
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
  let failure: Error | undefined;
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
  const startWriting = (): void => {
    if (queued.length === 0 || failure !== undefined) return void (writing = undefined);
    const group = queued;
    queued = [];
    const at = position;
    for (const batch of group) position += batch.length;
    writing = (async () => {
      await writeGroup(group, at);
      for (const batch of group) await hash.handOver(batch);
    })().then(startWriting, (error: unknown) => {
      failure = error instanceof Error ? error : new Error(String(error));
      writing = undefined;
    });
  };
  const append = async (batch: Buffer): Promise<void> => {
    queued.push(batch);
    if (!writing) startWriting();
    while (writing && queued.length >= MAX_QUEUED_BATCHES) await writing;
    if (failure !== undefined) throw failure;
  };
  const drain = async (): Promise<void> => {
    while (writing) await writing;
    if (failure !== undefined) throw failure;
  };
  try {
    direct = options.directIo ? await openForDirectWrites(file) : undefined;
    const misaligned = offset % DIRECT_IO_ALIGNMENT;
    // Taken when bytes come for it: a batch taken and never handed over stays the session's.
    let batch: Buffer | undefined;
    let room = misaligned === 0 ? Number.POSITIVE_INFINITY : DIRECT_IO_ALIGNMENT - misaligned;
    let filled = 0;
    for await (const received of body as AsyncIterable<Buffer | string>) {
      const chunk = typeof received === 'string' ? Buffer.from(received) : received;
      options.onChunk?.(chunk);
      for (let at = 0; at < chunk.length;) {
        if (!batch) {
          batch = await hash.batch();
          room = Math.min(room, batch.length);
        }
        const copied = Math.min(chunk.length - at, room - filled);
        // Buffer.fill is a memcpy (Buffer.copy into shared memory goes one atomic word at a time).
        batch.fill(
          copied === chunk.length ? chunk : chunk.subarray(at, at + copied),
          filled,
          filled + copied,
        );
        at += copied;
        filled += copied;
        if (filled < room) continue;
        await append(room === batch.length ? batch : batch.subarray(0, room));
        batch = undefined;
        room = Number.POSITIVE_INFINITY;
        filled = 0;
      }
    }
    if (batch && filled > 0) await append(batch.subarray(0, filled));
    await drain();
    return position - offset;
  } finally {
    // Batch memory is reused once handed back: no write may still be reading it.
    while (writing) await writing;
    own?.abort();
    await direct?.close();
    await handle.close();
  }
}

/** At most this many full batches wait for the write in flight (with it, the 7 a session may hold). */
const MAX_QUEUED_BATCHES = 3;

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
