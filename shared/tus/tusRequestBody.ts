import { AsyncLocalStorage } from 'node:async_hooks';
import type { Readable } from 'node:stream';
import { asError } from '#shared/errors/asError';
import { TusHttpError } from './tusHttpError';

/**
 * The body of the tus request being handled, as Node received it, for a data store that reads it
 * itself (the local disk's writeTusBody) instead of through the web stream @tus/server hands it:
 * tus takes a web Request, and the way from the socket to the store through it was a web stream,
 * Readable.fromWeb, a PassThrough and tus's StreamLimiter, four hand-offs per 64 KiB chunk. tus is
 * given `standIn` as the body instead: it carries no bytes and ends once the store is done with the
 * request (`done`), so tus's pipeline ends as it would have; and tus ending it earlier (it ends the
 * body when it aborts the request: the client went away, or another request asked for the upload's
 * lock) is the store's sign to stop reading, as the end of the real body was.
 */
export class TusRequestBody {
  readonly standIn: ReadableStream<Uint8Array>;
  private close!: () => void;
  private claimed = false;

  constructor(readonly request: Readable) {
    this.standIn = new ReadableStream<Uint8Array>({
      start: (controller) => void (this.close = () => controller.close()),
    });
  }

  /** The request's body, once: the store writing it calls `done` when it has finished with it. */
  claim(): Readable | undefined {
    if (this.claimed) return undefined;
    this.claimed = true;
    return this.request;
  }

  /** Ends the stand-in body tus reads. */
  done(): void {
    try {
      this.close();
    } catch {
      // closed already (tus cancelled it)
    }
  }
}

const scope = new AsyncLocalStorage<TusRequestBody | undefined>();

export function withTusRequestBody<T>(body: TusRequestBody | undefined, work: () => T): T {
  return scope.run(body, work);
}

export function currentTusRequestBody(): TusRequestBody | undefined {
  return scope.getStore();
}

/** 413 as tus's StreamLimiter answers a body longer than the upload has room for. */
const bodyTooLong = () => new TusHttpError(413, { detail: 'Maximum size exceeded' });

/** How a Node request body fails when its client goes away before sending all of it. */
export function closedEarly(error: unknown): boolean {
  const { code, name } = (error ?? {}) as { code?: unknown; name?: unknown };
  return code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || name === 'AbortError';
}

/** Bytes received and not yet taken before the request is paused (its socket no longer read). */
const QUEUED_BYTES = 1024 * 1024;

/**
 * Takes one chunk of a body: undefined when it is done with it already, else a promise that settles
 * when it is (the next chunk waits for it; a rejection ends the read with that error).
 */
export type TakeChunk = (chunk: Buffer) => Promise<void> | undefined;

/**
 * Hands the chunks of a request body to `take`, in order, until the body ends, its client goes away
 * (the bytes received so far are the body then, as tus treats a request whose client left), or
 * `stop` aborts (no further chunk is taken; the request is left paused). More than `maxBytes` fails
 * with 413 before the chunk crossing it is taken. Resolves once the last chunk is taken.
 *
 * Each chunk is taken in the request's own 'data' event, with no promise or queue on the way when
 * `take` is done with it at once (the local disk's batch copy, all but one chunk in 64): an async
 * iterator cost two promises and a microtask per 64 KiB chunk, on the event loop that receives
 * every byte. Chunks that arrive while `take` is busy wait in a queue, and the request is paused
 * only once QUEUED_BYTES wait: a request paused at once (read() on 'readable', as Node's own
 * iterator does) stops and restarts reading its socket for nearly every chunk.
 */
export function readRequestBody(
  body: Readable,
  stop: AbortSignal,
  maxBytes: number,
  take: TakeChunk,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const queue: Buffer[] = [];
    let queued = 0;
    let received = 0;
    /** `take` is not done with a chunk yet: what arrives waits in `queue`. */
    let taking: Promise<void> | undefined;
    /** No chunk will arrive any more: the read ends once the queue is taken. */
    let ended = false;
    let finished = false;
    /** Stops reading; settles once `take` is done with the chunk it has (never while it is busy). */
    const finish = (failure?: unknown): void => {
      if (finished) return;
      finished = true;
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
      body.off('close', onClose);
      stop.removeEventListener('abort', onStop);
      body.pause();
      queue.length = 0;
      const settle = (error: unknown): void => (error === undefined ? resolve() : reject(asError(error)));
      if (!taking) return settle(failure);
      taking.then(
        () => settle(failure),
        (error: unknown) => settle(failure ?? error),
      );
    };
    /** Takes queued chunks until `take` is busy with one; ends the read once all are taken after the end. */
    const takeQueued = (): void => {
      while (!finished && !taking) {
        const chunk = queue.shift();
        if (chunk === undefined) return void (ended && finish());
        queued -= chunk.length;
        if (queued < QUEUED_BYTES && body.isPaused() && !ended) body.resume();
        give(chunk);
      }
    };
    const give = (chunk: Buffer): void => {
      let pending: Promise<void> | undefined;
      try {
        pending = take(chunk);
      } catch (error) {
        return finish(error);
      }
      if (pending === undefined) return;
      taking = pending;
      pending.then(
        () => {
          taking = undefined;
          takeQueued();
        },
        (error: unknown) => {
          taking = undefined;
          finish(error);
        },
      );
    };
    const onData = (data: Buffer | string): void => {
      const chunk = typeof data === 'string' ? Buffer.from(data) : data;
      received += chunk.length;
      if (received > maxBytes) return finish(bodyTooLong());
      if (stop.aborted) return finish();
      if (!taking && queue.length === 0) return give(chunk);
      queue.push(chunk);
      queued += chunk.length;
      if (queued >= QUEUED_BYTES) body.pause();
    };
    const onEnd = (): void => {
      ended = true;
      if (!taking) takeQueued();
    };
    const onError = (error: Error): void => {
      // The client went away: what was received is the body. Anything else fails the read.
      if (closedEarly(error)) return onEnd();
      finish(error);
    };
    const onClose = (): void => {
      // Closed before its end without an error: the client went away.
      if (!body.readableEnded) onEnd();
    };
    const onStop = (): void => finish();
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('error', onError);
    body.on('close', onClose);
    if (stop.aborted) return finish();
    stop.addEventListener('abort', onStop);
    if (body.isPaused()) body.resume();
  });
}
