import { stat } from 'node:fs';
import { Worker } from 'node:worker_threads';

/**
 * Bytes in one batch: received chunks are copied into batches of exactly this size (the last may be
 * shorter), each written with one call. A write that extends a file holds its inode until the disk
 * has it (ext4, O_DIRECT), so the writes of one upload follow one another: 4 MiB ones took a
 * 2 GiB upload to 940 MB/s where 1 MiB ones gave 755 (bare storing server, alternating, median of 4).
 */
export const BATCH_BYTES = 4 * 1024 * 1024;
/**
 * What O_DIRECT asks to be aligned to: the memory written from, the file offset and the length. A
 * page covers every logical block size in use (512 and 4096 bytes).
 */
export const DIRECT_IO_ALIGNMENT = 4096;

/**
 * The hashing thread's nice value. When the cores are busy, the event loop, which receives the
 * upload and answers every other request, goes first; the hashing thread still gets a third of a
 * core's share against it, and it needs less than that (0.6 s per GiB, 40 % of a core at 700 MB/s).
 * On two cores with the client beside it, a 2 GiB upload went from 887 to 981 MB/s (service,
 * alternating, median of 6 rounds each), as the event loop lost less time to the hashing thread.
 */
export const HASHING_NICE = 5;

/** Bytes hashed before the hashing thread looks at its event loop again (a file write ended). */
const HASH_SLICE_BYTES = 1024 * 1024;

/**
 * The hashing thread: SHA-256 per session id, over bytes of arenas of shared memory, in the order
 * they were sent. Each arena is shared with it once, when it is made; after that a message names a
 * range of one by number and offset, so no memory is copied, transferred or wrapped anew per batch
 * (a transferred 2 MiB buffer came back as new external memory to the garbage collector each time,
 * and the collections it set off cost as much CPU as the hashing). It names the range back once
 * hashed, so the sender reuses it.
 *
 * It also writes batches into files (OffThreadFileWrite, the tus PATCH path): a write session's
 * batches go to its file in order, one write at a time (the ones that arrived meanwhile together in
 * the next writev), each started by this thread as soon as the one before has ended, not when an
 * event loop busy receiving the body gets round to it; the write runs on libuv's pool while this
 * thread hashes. Hashing goes in slices of HASH_SLICE_BYTES, back to this thread's event loop
 * between two, so a write that ended meanwhile starts the next within a slice, not a batch.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
if (process.platform === 'linux') {
  // This thread only (Linux keeps a nice value per thread; elsewhere it would be the process's).
  try { require('node:os').setPriority(${HASHING_NICE}); } catch {}
}
const sessions = new Map();
const arenas = new Map();
const writers = new Map();
// Hashing work (updates, digests, aborts), in the order it was asked for.
const tasks = [];
let scheduled = false;
const schedule = () => {
  if (scheduled || tasks.length === 0) return;
  scheduled = true;
  setImmediate(runTask);
};
const hashOf = (id) => {
  let hash = sessions.get(id);
  if (!hash) sessions.set(id, (hash = createHash('sha256')));
  return hash;
};
function runTask() {
  scheduled = false;
  const task = tasks[0];
  if (task.kind === 'update') {
    const end = Math.min(task.bytes.length, task.at + ${HASH_SLICE_BYTES});
    const slice = task.bytes.subarray(task.at, end);
    for (const id of task.ids) hashOf(id).update(slice);
    task.at = end;
    if (end === task.bytes.length) {
      tasks.shift();
      task.done();
    }
  } else {
    tasks.shift();
    task.run();
  }
  schedule();
}
const bytesOf = (message) => new Uint8Array(arenas.get(message.arena), message.offset, message.length);
const released = (id, message) => () =>
  parentPort.postMessage({ id, kind: 'hashed', arena: message.arena, offset: message.offset });

// Writes a group of batches at its position, all of it (a short write goes on from where it
// stopped); O_DIRECT refused with EINVAL goes through the page cache from then on.
function writeGroup(writer, group, callback) {
  let views = group.map((item) => item.bytes);
  let position = group[0].position;
  let direct = writer.directFd !== undefined && position % ${DIRECT_IO_ALIGNMENT} === 0 && group.every((item) => item.direct);
  const step = () =>
    fs.writev(direct ? writer.directFd : writer.fd, views, position, (error, written) => {
      if (error && direct && error.code === 'EINVAL') {
        writer.directFd = undefined;
        direct = false;
        return step();
      }
      if (error) return callback(error);
      if (written === 0) return callback(Object.assign(new Error('the file took no bytes'), { code: 'EIO' }));
      position += written;
      while (written > 0) {
        if (written >= views[0].length) written -= views.shift().length;
        else {
          views[0] = views[0].subarray(written);
          written = 0;
        }
      }
      if (views.length === 0) return callback();
      direct = direct && position % ${DIRECT_IO_ALIGNMENT} === 0 && views.every((view) => view.byteOffset % ${DIRECT_IO_ALIGNMENT} === 0 && view.length % ${DIRECT_IO_ALIGNMENT} === 0);
      step();
    });
  step();
}
function pump(id, writer) {
  if (writer.writing) return;
  if (writer.queue.length === 0) {
    if (!writer.finishing) return;
    writers.delete(id);
    return parentPort.postMessage({ id, kind: 'written', bytes: writer.written, failed: writer.failed });
  }
  const group = writer.queue;
  writer.queue = [];
  if (writer.failed) {
    // Nothing after a failed write is written: the file ends where its bytes end.
    for (const item of group) item.done();
    return pump(id, writer);
  }
  writer.writing = true;
  writeGroup(writer, group, (error) => {
    writer.writing = false;
    if (error) {
      writer.failed = { code: error.code, message: error.message };
      parentPort.postMessage({ id, kind: 'writeFailed', ...writer.failed });
    } else for (const item of group) writer.written += item.bytes.length;
    for (const item of group) item.done();
    pump(id, writer);
  });
}

parentPort.on('message', (message) => {
  const { id, kind } = message;
  if (kind === 'arena') arenas.set(message.arena, message.memory);
  else if (kind === 'forget') arenas.delete(message.arena);
  else if (kind === 'update') {
    tasks.push({ kind, ids: [id], bytes: bytesOf(message), at: 0, done: released(id, message) });
    schedule();
  } else if (kind === 'write') {
    let writer = writers.get(id);
    if (!writer) {
      writer = { fd: message.fd, directFd: message.directFd, queue: [], writing: false, written: 0, failed: undefined, finishing: false };
      writers.set(id, writer);
    }
    // The batch comes back once written and, when it names hashes, hashed.
    let left = message.hashes.length > 0 ? 2 : 1;
    const release = released(id, message);
    const done = () => --left === 0 && release();
    const bytes = bytesOf(message);
    writer.queue.push({ bytes, position: message.position, direct: message.direct, done });
    if (message.hashes.length > 0) {
      tasks.push({ kind: 'update', ids: message.hashes, bytes, at: 0, done });
      schedule();
    }
    pump(id, writer);
  } else if (kind === 'finish') {
    const writer = writers.get(id);
    if (!writer) return parentPort.postMessage({ id, kind: 'written', bytes: 0, failed: undefined });
    writer.finishing = true;
    pump(id, writer);
  } else if (kind === 'open') {
    tasks.push({ kind, run: () => sessions.set(id, createHash(message.algorithm)) });
    schedule();
  } else if (kind === 'digest') {
    tasks.push({
      kind,
      run: () => {
        const hash = sessions.get(id) ?? createHash('sha256');
        sessions.delete(id);
        parentPort.postMessage({ id, kind: 'digest', sha256: hash.digest('hex') });
      },
    });
    schedule();
  } else {
    tasks.push({ kind, run: () => sessions.delete(id) });
    schedule();
  }
});`;

/** Batch memory a session may have handed over and not had back before `update` makes its caller wait. */
const MAX_IN_FLIGHT_BYTES = 8 * 1024 * 1024;
/**
 * Batch memory a file write (OffThreadFileWrite) may have handed over and not had back before
 * `write` makes its caller wait: 24 MiB, room for the hashing thread to fall behind by a few
 * batches on busy cores while the disk stays busy. With the batch being filled, 7 of an arena's 8.
 */
const MAX_WRITE_IN_FLIGHT_BYTES = 6 * BATCH_BYTES;
/** Batches per arena: one upload holds at most 7 (6 being written or hashed, 1 being filled). */
const ARENA_BATCHES = 8;
const WASM_PAGE_BYTES = 64 * 1024;
/** A slot's owner while the hashing thread has it. */
const HASHING = -1;
const FREE = 0;

/** How the hashing thread tells of a write that failed (an errno code such as ENOSPC, and its message). */
interface WriteFailure {
  readonly code: string | undefined;
  readonly message: string;
}

type Reply =
  | { readonly id: number; readonly kind: 'hashed'; readonly arena: number; readonly offset: number }
  | { readonly id: number; readonly kind: 'digest'; readonly sha256: string }
  | ({ readonly id: number; readonly kind: 'writeFailed' } & WriteFailure)
  | {
      readonly id: number;
      readonly kind: 'written';
      readonly bytes: number;
      readonly failed: WriteFailure | undefined;
    };

interface Session {
  inFlight: number;
  onHashed: (() => void) | undefined;
  onDigest: ((sha256: string) => void) | undefined;
  /** A file write's batches: one failed (the ones after it are not written). */
  onWriteFailed?: (error: Error) => void;
  /** A file write's batches are all written (or given up after one failed). */
  onWritten?: (bytes: number, failed: Error | undefined) => void;
  fail: (error: Error) => void;
}

/** The error a write on the hashing thread failed with, as fs would have thrown it. */
const writeError = ({ code, message }: WriteFailure): Error =>
  Object.assign(new Error(message), code === undefined ? {} : { code });

/** What the hashing thread needs to write a batch: the file, where, and which hashes it feeds. */
interface BatchWrite {
  readonly fd: number;
  /** The same file opened with O_DIRECT, for whole aligned batches at aligned positions. */
  readonly directFd: number | undefined;
  readonly position: number;
  /** Session ids of the hashes the batch's bytes go to, in order, besides the file. */
  readonly hashes: readonly number[];
}

/** Shared memory cut into ARENA_BATCHES batches, each owned by nobody, a session, or the hashing thread. */
interface Arena {
  readonly number: number;
  readonly memory: SharedArrayBuffer;
  /** Starts on a page boundary, so its batches can be written with O_DIRECT. */
  readonly aligned: boolean;
  readonly owners: number[];
}

interface WasmMemoryApi {
  readonly Memory: new (descriptor: { initial: number; maximum: number; shared: boolean }) => {
    readonly buffer: SharedArrayBuffer;
  };
}

/** The arena each piece of batch memory belongs to, for update and directWritable to recognise. */
const arenaOfMemory = new WeakMap<SharedArrayBuffer, Arena>();

/**
 * Memory the runtime maps whole pages for: shared WebAssembly memory starts on a page boundary, which
 * O_DIRECT needs and no Buffer or SharedArrayBuffer allocation promises. Where WebAssembly is not
 * available (node --jitless) or refuses, plain shared memory, written through the page cache.
 */
function arenaMemory(bytes: number): { memory: SharedArrayBuffer; aligned: boolean } {
  const wasm = (globalThis as { WebAssembly?: WasmMemoryApi }).WebAssembly;
  try {
    if (wasm) {
      const pages = bytes / WASM_PAGE_BYTES;
      return {
        memory: new wasm.Memory({ initial: pages, maximum: pages, shared: true }).buffer,
        aligned: true,
      };
    }
  } catch {
    // Out of address space for WebAssembly memories: the plain kind below still works.
  }
  return { memory: new SharedArrayBuffer(bytes), aligned: false };
}

/** One thread for the process, started on first use; it keeps the process alive only while hashing. */
class HashingThread {
  private readonly worker = new Worker(WORKER_SOURCE, { eval: true });
  private readonly sessions = new Map<number, Session>();
  /** The first arena is kept while the thread lives; a later one is let go once all of it is free. */
  private readonly arenas = new Map<number, Arena>();
  /** Free batches, the most recently freed last (its pages are the likeliest to be resident). */
  private free: { arena: Arena; index: number }[] = [];
  private nextArena = 1;
  private dead: Error | undefined;

  constructor(onDeath: () => void) {
    // libuv's pool threads, which run every file write of the process (this thread's too), start
    // at the pool's first use and take the nice value of the thread that made it: this one, never
    // the hashing thread (whose writes would otherwise start them, at its lower priority).
    stat('.', () => undefined);
    this.worker.unref();
    this.worker.on('message', (reply: Reply) => this.receive(reply));
    const die = (error: Error): void => {
      if (this.dead) return;
      this.dead = error;
      onDeath();
      for (const session of this.sessions.values()) session.fail(error);
      this.sessions.clear();
    };
    this.worker.on('error', die);
    this.worker.on('exit', (code) => die(new Error(`the hashing thread exited (code ${code})`)));
  }

  /** Bytes of shared memory in arenas now. */
  get sharedBytes(): number {
    return this.arenas.size * ARENA_BATCHES * BATCH_BYTES;
  }

  open(id: number, session: Session): void {
    if (this.dead) throw this.dead;
    if (this.sessions.size === 0) this.worker.ref();
    this.sessions.set(id, session);
  }

  /** A free batch, now owned by session `id`. */
  give(id: number): Buffer {
    if (this.dead) throw this.dead;
    const { arena, index } = this.free.pop() ?? this.makeArena();
    arena.owners[index] = id;
    return Buffer.from(arena.memory, index * BATCH_BYTES, BATCH_BYTES);
  }

  /** Starts hashing `batch`, a batch session `id` owns or the start of one. */
  update(id: number, batch: Buffer): void {
    this.worker.postMessage({ id, kind: 'update', ...this.handOver(id, batch, 'OffThreadSha256.update') });
  }

  /** Starts writing `batch` (then hashing it into `write.hashes`), in order after the session's others. */
  write(id: number, batch: Buffer, write: BatchWrite): void {
    const range = this.handOver(id, batch, 'OffThreadFileWrite.write');
    this.worker.postMessage({ id, kind: 'write', ...range, ...write, direct: directWritable(batch) });
  }

  send(id: number, kind: 'digest' | 'abort' | 'finish'): void {
    if (this.dead) throw this.dead;
    this.worker.postMessage({ id, kind });
  }

  /** Starts session `id` hashing with `algorithm` instead of SHA-256 (before its first bytes). */
  openHash(id: number, algorithm: string): void {
    if (this.dead) throw this.dead;
    this.worker.postMessage({ id, kind: 'open', algorithm });
  }

  /** The thread's from now: `batch`, which session `id` owns, or its start. */
  private handOver(
    id: number,
    batch: Buffer,
    caller: string,
  ): { arena: number; offset: number; length: number } {
    if (this.dead) throw this.dead;
    const arena = arenaOfMemory.get(batch.buffer as SharedArrayBuffer);
    const index = batch.byteOffset / BATCH_BYTES;
    if (arena === undefined || arena.owners[index] !== id || batch.length > BATCH_BYTES)
      throw new Error(`${caller} takes a batch its session gave, once`);
    arena.owners[index] = HASHING;
    return { arena: arena.number, offset: batch.byteOffset, length: batch.length };
  }

  /** Ends session `id`: the batches it still owns are free again. */
  close(id: number): void {
    this.sessions.delete(id);
    if (this.sessions.size === 0) this.worker.unref();
    for (const arena of this.arenas.values())
      arena.owners.forEach((owner, index) => owner === id && this.release(arena, index));
  }

  private makeArena(): { arena: Arena; index: number } {
    const { memory, aligned } = arenaMemory(ARENA_BATCHES * BATCH_BYTES);
    const arena: Arena = {
      number: this.nextArena++,
      memory,
      aligned,
      owners: new Array<number>(ARENA_BATCHES).fill(FREE),
    };
    arenaOfMemory.set(memory, arena);
    this.arenas.set(arena.number, arena);
    this.worker.postMessage({ kind: 'arena', arena: arena.number, memory });
    // Handed out from the lowest index up, like a fresh pool.
    for (let index = ARENA_BATCHES - 1; index > 0; index--) this.free.push({ arena, index });
    return { arena, index: 0 };
  }

  private release(arena: Arena, index: number): void {
    arena.owners[index] = FREE;
    if (this.arenas.get(arena.number) !== arena) return;
    this.free.push({ arena, index });
    const first = this.arenas.keys().next().value;
    if (arena.number === first || arena.owners.some((owner) => owner !== FREE)) return;
    this.free = this.free.filter((slot) => slot.arena !== arena);
    this.arenas.delete(arena.number);
    if (!this.dead) this.worker.postMessage({ kind: 'forget', arena: arena.number });
  }

  private receive(reply: Reply): void {
    const session = this.sessions.get(reply.id);
    if (reply.kind === 'hashed') {
      const arena = this.arenas.get(reply.arena);
      if (arena) this.release(arena, reply.offset / BATCH_BYTES);
      if (!session) return;
      session.inFlight -= BATCH_BYTES;
      session.onHashed?.();
    } else if (reply.kind === 'digest') session?.onDigest?.(reply.sha256);
    else if (reply.kind === 'writeFailed') session?.onWriteFailed?.(writeError(reply));
    else session?.onWritten?.(reply.bytes, reply.failed && writeError(reply.failed));
  }
}

let thread: HashingThread | undefined;
let nextId = 1;
/** Each OffThreadSha256's thread and session id, for a file write to name it to the thread. */
const hashSessions = new WeakMap<OffThreadSha256, { thread: HashingThread; id: number }>();

const currentThread = (): HashingThread => (thread ??= new HashingThread(() => (thread = undefined)));

/**
 * SHA-256 computed on a worker thread, so hashing a large upload never holds the event loop that
 * answers requests (it costs about half a second per GiB). The bytes are given to it in batches of
 * memory the thread shares: `batch()` gives one to fill, `update` hands it over, and the caller must
 * not touch it again. Batches not handed over are taken back when the session ends. A file write
 * (OffThreadFileWrite) may feed it instead, on the thread. `algorithm` (the tus checksum
 * extension's sha1 or md5) replaces SHA-256; `digest` is then that digest in hex.
 */
export class OffThreadSha256 {
  private readonly id = nextId++;
  private readonly thread: HashingThread;
  private readonly session: Session;
  private failure: Error | undefined;
  private finished = false;

  constructor(algorithm: 'sha256' | 'sha1' | 'md5' = 'sha256') {
    this.thread = currentThread();
    this.session = {
      inFlight: 0,
      onHashed: undefined,
      onDigest: undefined,
      fail: (error) => {
        this.failure = error;
        this.session.onHashed?.();
      },
    };
    this.thread.open(this.id, this.session);
    if (algorithm !== 'sha256') this.thread.openHash(this.id, algorithm);
    hashSessions.set(this, { thread: this.thread, id: this.id });
  }

  /** BATCH_BYTES of shared memory to fill (not zeroed), this session's until handed to `update`. */
  batch(): Buffer {
    this.check();
    return this.thread.give(this.id);
  }

  /**
   * Hands over a batch this session gave, or its first bytes (`batch.subarray(0, n)`); resolves when
   * little enough of what was handed over waits to be hashed.
   */
  async update(batch: Buffer): Promise<void> {
    this.check();
    this.thread.update(this.id, batch);
    // The memory handed over, not just the bytes to hash: it is what waits in the queue.
    this.session.inFlight += BATCH_BYTES;
    while (this.session.inFlight > MAX_IN_FLIGHT_BYTES && !this.failure)
      await new Promise<void>((resolve) => (this.session.onHashed = resolve));
    this.session.onHashed = undefined;
    this.check();
  }

  /** Lowercase hex SHA-256 of everything handed over. */
  async digest(): Promise<string> {
    this.check();
    const sha256 = new Promise<string>((resolve, reject) => {
      this.session.onDigest = resolve;
      this.session.fail = reject;
    });
    this.thread.send(this.id, 'digest');
    try {
      return await sha256;
    } finally {
      this.end();
    }
  }

  /** Forgets the session (an upload that failed); its batches still being written must be done with. */
  abort(): void {
    if (this.finished) return;
    if (!this.failure) this.thread.send(this.id, 'abort');
    this.end();
  }

  private check(): void {
    if (this.failure) throw this.failure;
    if (this.finished) throw new Error('OffThreadSha256 used after digest or abort');
  }

  private end(): void {
    this.finished = true;
    this.thread.close(this.id);
  }
}

/**
 * A file written from batches on the hashing thread (the tus PATCH path): `batch()` gives one to
 * fill, `write` hands it over with its file position, and the thread writes the batches in order,
 * one write at a time (those that arrived meanwhile together in one writev), with O_DIRECT from `directFd`
 * for whole aligned batches, then hashes each into `hashes` (in order, after their earlier bytes)
 * and hands it back. The event loop only fills batches: no write waits for it to be started, and
 * its completion costs it nothing. After a failed write nothing more is written (the file ends where
 * its bytes end), and `write` rejects from then on. `finish` resolves once every batch handed over
 * is written (or rejects with the failure); the descriptors must stay open until it has settled.
 * Durability is the caller's: fdatasync after `finish`.
 */
export class OffThreadFileWrite {
  private readonly id = nextId++;
  private readonly thread: HashingThread;
  private readonly session: Session;
  private readonly hashes: number[];
  private failure: Error | undefined;
  private finishing: Promise<number> | undefined;

  constructor(
    private readonly fd: number,
    private readonly directFd: number | undefined,
    hashes: readonly OffThreadSha256[] = [],
  ) {
    this.thread = currentThread();
    this.hashes = hashes.map((hash) => {
      const session = hashSessions.get(hash);
      // A hash of a thread that died since, and was replaced, cannot be fed by this one.
      if (session?.thread !== this.thread) throw new Error('OffThreadFileWrite: a hash of another thread');
      return session.id;
    });
    this.session = {
      inFlight: 0,
      onHashed: undefined,
      onDigest: undefined,
      onWriteFailed: (error) => {
        this.failure ??= error;
        this.session.onHashed?.();
      },
      fail: (error) => {
        this.failure ??= error;
        this.session.onHashed?.();
        this.session.onWritten?.(0, error);
      },
    };
    this.thread.open(this.id, this.session);
  }

  /** BATCH_BYTES of shared memory to fill (not zeroed), this write's until handed to `write`. */
  batch(): Buffer {
    this.check();
    return this.thread.give(this.id);
  }

  /**
   * Hands over a batch this write gave, or its first bytes, to be written at `position` (right
   * after the batch before); resolves when few enough batches wait to be written and hashed,
   * rejects once a write failed.
   */
  async write(batch: Buffer, position: number): Promise<void> {
    this.check();
    this.thread.write(this.id, batch, {
      fd: this.fd,
      directFd: this.directFd,
      position,
      hashes: this.hashes,
    });
    this.session.inFlight += BATCH_BYTES;
    while (this.session.inFlight > MAX_WRITE_IN_FLIGHT_BYTES && !this.failure)
      await new Promise<void>((resolve) => (this.session.onHashed = resolve));
    this.session.onHashed = undefined;
    this.check();
  }

  /**
   * Resolves with the bytes written once every batch handed over is in the file; rejects with the
   * write that failed (or the thread's death). Ends the write: batches given and not handed over
   * are free again. Safe to call more than once.
   */
  finish(): Promise<number> {
    return (this.finishing ??= this.finishOnce());
  }

  private async finishOnce(): Promise<number> {
    try {
      // A dead thread throws here: its writes, if any, ended with it.
      const written = await new Promise<number>((resolve, reject) => {
        this.session.onWritten = (bytes, failed) => (failed ? reject(failed) : resolve(bytes));
        this.thread.send(this.id, 'finish');
      });
      if (this.failure) throw this.failure;
      return written;
    } finally {
      this.thread.close(this.id);
    }
  }

  private check(): void {
    if (this.failure) throw this.failure;
    if (this.finishing) throw new Error('OffThreadFileWrite used after finish');
  }
}

/** Whether `batch` (memory a session gave) may be written with O_DIRECT at an aligned file offset. */
export function directWritable(batch: Buffer): boolean {
  const arena = arenaOfMemory.get(batch.buffer as SharedArrayBuffer);
  return (
    arena !== undefined &&
    arena.aligned &&
    batch.byteOffset % DIRECT_IO_ALIGNMENT === 0 &&
    batch.length % DIRECT_IO_ALIGNMENT === 0
  );
}

/** Bytes of batch memory the hashing thread shares now (free, being hashed or given out). */
export function sharedBatchBytes(): number {
  return thread?.sharedBytes ?? 0;
}
