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

/**
 * The hashing thread: SHA-256 per session id, over bytes of arenas of shared memory, in the order
 * they were sent. Each arena is shared with it once, when it is made; after that a message names a
 * range of one by number and offset, so no memory is copied, transferred or wrapped anew per batch
 * (a transferred 2 MiB buffer came back as new external memory to the garbage collector each time,
 * and the collections it set off cost as much CPU as the hashing). It names the range back once
 * hashed, so the sender reuses it.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
if (process.platform === 'linux') {
  // This thread only (Linux keeps a nice value per thread; elsewhere it would be the process's).
  try { require('node:os').setPriority(${HASHING_NICE}); } catch {}
}
const sessions = new Map();
const arenas = new Map();
parentPort.on('message', (message) => {
  const { id, kind } = message;
  if (kind === 'arena') arenas.set(message.arena, message.memory);
  else if (kind === 'forget') arenas.delete(message.arena);
  else if (kind === 'update') {
    let hash = sessions.get(id);
    if (!hash) sessions.set(id, (hash = createHash('sha256')));
    hash.update(new Uint8Array(arenas.get(message.arena), message.offset, message.length));
    parentPort.postMessage({ id, kind: 'hashed', arena: message.arena, offset: message.offset });
  } else if (kind === 'digest') {
    const hash = sessions.get(id) ?? createHash('sha256');
    sessions.delete(id);
    parentPort.postMessage({ id, kind: 'digest', sha256: hash.digest('hex') });
  } else sessions.delete(id);
});`;

/** Batch memory a session may have handed over and not had back before `update` makes its caller wait. */
const MAX_IN_FLIGHT_BYTES = 8 * 1024 * 1024;
/** Batches per arena: one upload holds at most 7 (3 being written, 3 being hashed, 1 being filled). */
const ARENA_BATCHES = 8;
const WASM_PAGE_BYTES = 64 * 1024;
/** A slot's owner while the hashing thread has it. */
const HASHING = -1;
const FREE = 0;

type Reply =
  | { readonly id: number; readonly kind: 'hashed'; readonly arena: number; readonly offset: number }
  | { readonly id: number; readonly kind: 'digest'; readonly sha256: string };

interface Session {
  inFlight: number;
  onHashed: (() => void) | undefined;
  onDigest: ((sha256: string) => void) | undefined;
  fail: (error: Error) => void;
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
    if (this.dead) throw this.dead;
    const arena = arenaOfMemory.get(batch.buffer as SharedArrayBuffer);
    const index = batch.byteOffset / BATCH_BYTES;
    if (arena === undefined || arena.owners[index] !== id || batch.length > BATCH_BYTES)
      throw new Error('OffThreadSha256.update takes a batch its session gave, once');
    arena.owners[index] = HASHING;
    this.worker.postMessage({
      id,
      kind: 'update',
      arena: arena.number,
      offset: batch.byteOffset,
      length: batch.length,
    });
  }

  send(id: number, kind: 'digest' | 'abort'): void {
    if (this.dead) throw this.dead;
    this.worker.postMessage({ id, kind });
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
    } else session?.onDigest?.(reply.sha256);
  }
}

let thread: HashingThread | undefined;
let nextId = 1;

const currentThread = (): HashingThread => (thread ??= new HashingThread(() => (thread = undefined)));

/**
 * SHA-256 computed on a worker thread, so hashing a large upload never holds the event loop that
 * answers requests (it costs about half a second per GiB). The bytes are given to it in batches of
 * memory the thread shares: `batch()` gives one to fill, `update` hands it over, and the caller must
 * not touch it again. Batches not handed over are taken back when the session ends.
 */
export class OffThreadSha256 {
  private readonly id = nextId++;
  private readonly thread: HashingThread;
  private readonly session: Session;
  private failure: Error | undefined;
  private finished = false;

  constructor() {
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
