import { AsyncLocalStorage } from 'node:async_hooks';
import type { Readable } from 'node:stream';
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
 * The chunks of a request body until it ends, its client goes away (the bytes received so far
 * are the body then, as tus treats a request whose client left), or `stop` aborts (no further
 * chunk is taken; the request is left paused). More than `maxBytes` fails with 413 before the
 * chunk crossing it is given. The request flows ('data') into a queue and is paused only when
 * QUEUED_BYTES wait: a paused request (read() on 'readable', as Node's own iterator does) stops
 * and restarts reading its socket for nearly every 64 KiB chunk, beyond its 16 KiB high-water mark.
 */
export function requestChunks(
  body: Readable,
  stop: AbortSignal,
  maxBytes: number,
): AsyncIterable<Buffer | string> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<Buffer | string> {
      const end: IteratorReturnResult<undefined> = { done: true, value: undefined };
      const queue: (Buffer | string)[] = [];
      let queued = 0;
      let ended = false;
      let failure: Error | undefined;
      let wake: (() => void) | undefined;
      const awaken = (): void => {
        const waiting = wake;
        wake = undefined;
        waiting?.();
      };
      const onData = (chunk: Buffer | string): void => {
        queue.push(chunk);
        queued += chunk.length;
        if (queued >= QUEUED_BYTES) body.pause();
        awaken();
      };
      const onEnd = (): void => {
        ended = true;
        awaken();
      };
      const onError = (error: Error): void => {
        failure = error;
        awaken();
      };
      const onClose = (): void => {
        // Closed before its end without an error: the client went away.
        if (!body.readableEnded && !failure) ended = true;
        awaken();
      };
      let finished = false;
      const finish = (): IteratorReturnResult<undefined> => {
        if (finished) return end;
        finished = true;
        body.off('data', onData);
        body.off('end', onEnd);
        body.off('error', onError);
        body.off('close', onClose);
        stop.removeEventListener('abort', awaken);
        body.pause();
        return end;
      };
      body.on('data', onData);
      body.on('end', onEnd);
      body.on('error', onError);
      body.on('close', onClose);
      stop.addEventListener('abort', awaken);
      let received = 0;
      return {
        async next() {
          while (!finished) {
            if (stop.aborted) return finish();
            const chunk = queue.shift();
            if (chunk !== undefined) {
              queued -= chunk.length;
              if (queued < QUEUED_BYTES && body.isPaused() && !ended) body.resume();
              received += chunk.length;
              if (received > maxBytes) {
                finish();
                throw bodyTooLong();
              }
              return { done: false, value: chunk };
            }
            if (failure) {
              finish();
              if (closedEarly(failure)) return end;
              throw failure;
            }
            if (ended) return finish();
            await new Promise<void>((resolve) => (wake = resolve));
          }
          return end;
        },
        return() {
          return Promise.resolve(finish());
        },
      };
    },
  };
}
