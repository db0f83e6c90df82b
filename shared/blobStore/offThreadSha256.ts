import { Worker } from 'node:worker_threads';

/**
 * The hashing thread: SHA-256 per session id, over the first `length` bytes of buffers transferred
 * to it (never copied), in the order they were sent. It hands each buffer back once hashed, so the
 * sender reuses it and bounds what waits in the queue.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const sessions = new Map();
parentPort.on('message', (message) => {
  const { id, kind } = message;
  if (kind === 'update') {
    let hash = sessions.get(id);
    if (!hash) sessions.set(id, (hash = createHash('sha256')));
    hash.update(new Uint8Array(message.bytes, 0, message.length));
    parentPort.postMessage({ id, kind: 'hashed', bytes: message.bytes }, [message.bytes]);
  } else if (kind === 'digest') {
    const hash = sessions.get(id) ?? createHash('sha256');
    sessions.delete(id);
    parentPort.postMessage({ id, kind: 'digest', sha256: hash.digest('hex') });
  } else sessions.delete(id);
});`;

/** Memory a session may have handed over and not had back before `update` makes its caller wait. */
const MAX_IN_FLIGHT_BYTES = 8 * 1024 * 1024;

type Reply =
  | { readonly id: number; readonly kind: 'hashed'; readonly bytes: ArrayBuffer }
  | { readonly id: number; readonly kind: 'digest'; readonly sha256: string };

interface Session {
  inFlight: number;
  onHashed: (() => void) | undefined;
  onDigest: ((sha256: string) => void) | undefined;
  fail: (error: Error) => void;
}

/** One thread for the process, started on first use; it keeps the process alive only while hashing. */
class HashingThread {
  private readonly worker = new Worker(WORKER_SOURCE, { eval: true });
  private readonly sessions = new Map<number, Session>();
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

  open(id: number, session: Session): void {
    if (this.dead) throw this.dead;
    if (this.sessions.size === 0) this.worker.ref();
    this.sessions.set(id, session);
  }

  send(id: number, kind: 'update' | 'digest' | 'abort', bytes?: Buffer): void {
    if (this.dead) throw this.dead;
    if (!bytes) return this.worker.postMessage({ id, kind });
    const buffer = bytes.buffer as ArrayBuffer;
    this.worker.postMessage({ id, kind, bytes: buffer, length: bytes.length }, [buffer]);
  }

  close(id: number): void {
    this.sessions.delete(id);
    if (this.sessions.size === 0) this.worker.unref();
  }

  private receive(reply: Reply): void {
    if (reply.kind === 'hashed') release(reply.bytes);
    const session = this.sessions.get(reply.id);
    if (!session) return;
    if (reply.kind === 'hashed') {
      session.inFlight -= reply.bytes.byteLength;
      session.onHashed?.();
    } else session.onDigest?.(reply.sha256);
  }
}

let thread: HashingThread | undefined;
let nextId = 1;

/**
 * SHA-256 computed on a worker thread, so hashing a large upload never holds the event loop that
 * answers requests (it costs about a second per GiB). Each buffer given to `update` is transferred
 * to the thread and comes back to the pool: the caller hands it over and must not touch it again
 * (see batchBuffer).
 */
export class OffThreadSha256 {
  private readonly id = nextId++;
  private readonly thread: HashingThread;
  private readonly session: Session;
  private failure: Error | undefined;
  private finished = false;

  constructor() {
    this.thread = thread ??= new HashingThread(() => (thread = undefined));
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
    if (bytes.byteOffset !== 0 || !owned.has(bytes.buffer))
      throw new Error('OffThreadSha256.update takes the buffers batchBuffer gives');
    owned.delete(bytes.buffer);
    // The memory handed over, not just the bytes to hash: it is what waits in the queue.
    this.session.inFlight += bytes.buffer.byteLength;
    this.thread.send(this.id, 'update', bytes);
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

const POOLED_BYTES = 2 * 1024 * 1024;
const MAX_POOLED = 16;
/** Buffers back from the hashing thread, reused for the next batches. */
const pool: ArrayBuffer[] = [];
/** Memory batchBuffer gave out and update has not yet taken: what may be transferred. */
const owned = new WeakSet<ArrayBufferLike>();

function release(buffer: ArrayBuffer): void {
  if (buffer.byteLength === POOLED_BYTES && pool.length < MAX_POOLED) pool.push(buffer);
}

/**
 * The chunks copied into one buffer that owns its memory (never a slice of Node's shared pool, which
 * must not be transferred), taken from the buffers the hashing thread handed back when one fits.
 */
export function batchBuffer(chunks: readonly Buffer[], length: number): Buffer {
  const memory =
    length <= POOLED_BYTES ? (pool.pop() ?? new ArrayBuffer(POOLED_BYTES)) : new ArrayBuffer(length);
  owned.add(memory);
  const batch = Buffer.from(memory, 0, length);
  let offset = 0;
  for (const chunk of chunks) offset += chunk.copy(batch, offset);
  return batch;
}
