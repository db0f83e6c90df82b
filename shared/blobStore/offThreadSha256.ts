import { Worker } from 'node:worker_threads';

/**
 * The hashing thread: SHA-256 per session id, over the first `length` bytes of a slot of shared
 * memory, in the order they were sent. Each slot is shared with it once, when it is made; after that
 * a message names a slot by number, so no memory is copied, transferred or wrapped anew per batch
 * (a transferred 2 MiB buffer came back as new external memory to the garbage collector each time,
 * and the collections it set off cost as much CPU as the hashing). It names the slot back once
 * hashed, so the sender reuses it.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const sessions = new Map();
const slots = new Map();
parentPort.on('message', (message) => {
  const { id, kind } = message;
  if (kind === 'slot') slots.set(message.slot, new Uint8Array(message.memory));
  else if (kind === 'forget') slots.delete(message.slot);
  else if (kind === 'update') {
    let hash = sessions.get(id);
    if (!hash) sessions.set(id, (hash = createHash('sha256')));
    hash.update(slots.get(message.slot).subarray(0, message.length));
    parentPort.postMessage({ id, kind: 'hashed', slot: message.slot });
  } else if (kind === 'digest') {
    const hash = sessions.get(id) ?? createHash('sha256');
    sessions.delete(id);
    parentPort.postMessage({ id, kind: 'digest', sha256: hash.digest('hex') });
  } else sessions.delete(id);
});`;

/** Memory a session may have handed over and not had back before `update` makes its caller wait. */
const MAX_IN_FLIGHT_BYTES = 8 * 1024 * 1024;
/** The capacity of a pooled batch (batches are filled to about 1 MiB; a larger one gets its own memory). */
const POOLED_BYTES = 2 * 1024 * 1024;
/** Free pooled slots kept for the next batches; one freed beyond these is forgotten on both sides. */
const MAX_POOLED = 16;

type Reply =
  | { readonly id: number; readonly kind: 'hashed'; readonly slot: number }
  | { readonly id: number; readonly kind: 'digest'; readonly sha256: string };

interface Session {
  inFlight: number;
  onHashed: (() => void) | undefined;
  onDigest: ((sha256: string) => void) | undefined;
  fail: (error: Error) => void;
}

/** What the main thread knows of a slot of shared memory, kept beside it (weakly). */
interface Slot {
  readonly number: number;
  readonly thread: HashingThread;
  /** Out with a caller to fill, not yet handed to update. */
  given: boolean;
}

/** The slot of each piece of memory batchBuffer gave out, for update to recognise. */
const slotOfMemory = new WeakMap<SharedArrayBuffer, Slot>();

/**
 * A batch given out and dropped without being handed over (a failed upload) is reclaimed once no
 * view of its memory is left: the thread then forgets the slot too.
 */
const dropped = new FinalizationRegistry<Slot>((slot) => slot.thread.forget(slot.number));

/** One thread for the process, started on first use; it keeps the process alive only while hashing. */
class HashingThread {
  private readonly worker = new Worker(WORKER_SOURCE, { eval: true });
  private readonly sessions = new Map<number, Session>();
  /** Memory held here while it is pooled or being hashed; a given batch is held by its caller only. */
  private readonly free: SharedArrayBuffer[] = [];
  private readonly hashing = new Map<number, SharedArrayBuffer>();
  private nextSlot = 1;
  private readonly capacities = new Map<number, number>();
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

  /** Bytes of shared memory the thread knows: pooled, being hashed, or out with callers. */
  get sharedBytes(): number {
    let bytes = 0;
    for (const capacity of this.capacities.values()) bytes += capacity;
    return bytes;
  }

  open(id: number, session: Session): void {
    if (this.dead) throw this.dead;
    if (this.sessions.size === 0) this.worker.ref();
    this.sessions.set(id, session);
  }

  /** Memory of at least `bytes` to fill, pooled when it is of the usual size. */
  give(bytes: number): SharedArrayBuffer {
    if (this.dead) throw this.dead;
    const memory =
      (bytes <= POOLED_BYTES ? this.free.pop() : undefined) ?? this.make(Math.max(bytes, POOLED_BYTES));
    slotOfMemory.get(memory)!.given = true;
    return memory;
  }

  update(id: number, memory: SharedArrayBuffer, length: number): void {
    if (this.dead) throw this.dead;
    const slot = slotOfMemory.get(memory)!;
    slot.given = false;
    this.hashing.set(slot.number, memory);
    this.worker.postMessage({ id, kind: 'update', slot: slot.number, length });
  }

  send(id: number, kind: 'digest' | 'abort'): void {
    if (this.dead) throw this.dead;
    this.worker.postMessage({ id, kind });
  }

  close(id: number): void {
    this.sessions.delete(id);
    if (this.sessions.size === 0) this.worker.unref();
  }

  /** The thread lets go of a slot's memory (no longer pooled, or dropped by its caller). */
  forget(number: number): void {
    const capacity = this.capacities.get(number);
    if (capacity === undefined) return;
    this.capacities.delete(number);
    if (!this.dead) this.worker.postMessage({ kind: 'forget', slot: number });
  }

  private make(capacity: number): SharedArrayBuffer {
    const memory = new SharedArrayBuffer(capacity);
    const slot: Slot = { number: this.nextSlot++, thread: this, given: false };
    slotOfMemory.set(memory, slot);
    dropped.register(memory, slot, slot);
    this.capacities.set(slot.number, capacity);
    this.worker.postMessage({ kind: 'slot', slot: slot.number, memory });
    return memory;
  }

  private release(memory: SharedArrayBuffer): void {
    if (memory.byteLength === POOLED_BYTES && this.free.length < MAX_POOLED)
      return void this.free.push(memory);
    const slot = slotOfMemory.get(memory)!;
    dropped.unregister(slot);
    this.forget(slot.number);
  }

  private receive(reply: Reply): void {
    const session = this.sessions.get(reply.id);
    if (reply.kind === 'hashed') {
      const memory = this.hashing.get(reply.slot);
      this.hashing.delete(reply.slot);
      if (memory) this.release(memory);
      if (!session) return;
      session.inFlight -= memory?.byteLength ?? 0;
      session.onHashed?.();
    } else session?.onDigest?.(reply.sha256);
  }
}

let thread: HashingThread | undefined;
let nextId = 1;

const currentThread = (): HashingThread => (thread ??= new HashingThread(() => (thread = undefined)));

/**
 * SHA-256 computed on a worker thread, so hashing a large upload never holds the event loop that
 * answers requests (it costs about half a second per GiB). Each buffer given to `update` is memory
 * the thread shares (see batchBuffer): the caller hands it over and must not touch it again.
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

  /** Hands `bytes` over; resolves when little enough of what was handed over waits to be hashed. */
  async update(bytes: Buffer): Promise<void> {
    this.check();
    const memory = bytes.buffer as SharedArrayBuffer;
    const slot = slotOfMemory.get(memory);
    if (bytes.byteOffset !== 0 || !slot?.given || slot.thread !== this.thread)
      throw new Error('OffThreadSha256.update takes the buffers batchBuffer gives, once');
    // The memory handed over, not just the bytes to hash: it is what waits in the queue.
    this.session.inFlight += memory.byteLength;
    this.thread.update(this.id, memory, bytes.length);
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

  /** Forgets the session (an upload that failed). */
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
 * The chunks copied into one batch of memory the hashing thread shares (pooled when it fits):
 * `update` takes it once. Writing to it after that corrupts the hash.
 */
export function batchBuffer(chunks: readonly Buffer[], length: number): Buffer {
  const batch = Buffer.from(currentThread().give(length), 0, length);
  let offset = 0;
  for (const chunk of chunks) offset += chunk.copy(batch, offset);
  return batch;
}

/** Bytes of batch memory the hashing thread shares now (pooled, being hashed or given out). */
export function sharedBatchBytes(): number {
  return thread?.sharedBytes ?? 0;
}
