import { finished, type Readable } from 'node:stream';
import { BlobTooLargeError } from '../blobStore';
import { POOLED_BYTES, emptyBatch } from '../offThreadSha256';

export interface DrainOptions {
  /** Bytes a batch is filled to before it is handed on (at most the pooled batch capacity). */
  readonly batchBytes: number;
  /** Fails with BlobTooLargeError before any byte beyond it is handed on. */
  readonly maxBytes?: number;
}

/**
 * Reads `body` to its end, copying its chunks straight into pooled batches (see emptyBatch) and
 * handing each full batch, then the last partial one, to `onBatch`, one at a time and in order: the
 * stream is paused while a batch is being handed on. Resolves with the byte count once the last batch
 * is taken; on any failure (stream, limit, onBatch) rejects with the first one and destroys `body`.
 *
 * One 'data' listener does what a size-limit Transform and an async iterator did: per 64 KiB
 * socket chunk that is a copy and a comparison, with no stream stage or promise between the
 * parser and the batch (the event loop is the narrowest part of an upload).
 */
export function drainInBatches(
  body: Readable,
  options: DrainOptions,
  onBatch: (batch: Buffer) => Promise<void>,
): Promise<number> {
  const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
  if (!(options.batchBytes > 0 && options.batchBytes <= POOLED_BYTES))
    throw new RangeError(`batchBytes must be within 1..${POOLED_BYTES}, got ${options.batchBytes}`);
  return new Promise<number>((resolve, reject) => {
    let size = 0;
    let batch = emptyBatch();
    let filled = 0;
    /** The hand-offs in order: each batch waits for the one before it. */
    let handing: Promise<void> = Promise.resolve();
    let waiting = 0;
    let failed = false;

    const fail = (error: unknown): void => {
      if (failed) return;
      failed = true;
      body.off('data', onData);
      body.destroy();
      reject(error instanceof Error ? error : new Error(String(error)));
    };

    const handOn = (bytes: Buffer): void => {
      body.pause();
      waiting++;
      handing = handing
        .then(async () => {
          if (failed) return;
          await onBatch(bytes);
          if (--waiting === 0 && !failed) body.resume();
        })
        .catch(fail);
    };

    const onData = (chunk: unknown): void => {
      if (failed) return;
      if (!Buffer.isBuffer(chunk))
        return fail(new TypeError('drainInBatches reads a byte stream, got a non-Buffer chunk'));
      size += chunk.length;
      if (size > maxBytes) return fail(new BlobTooLargeError(maxBytes));
      for (let offset = 0; offset < chunk.length;) {
        const copied = chunk.copy(batch, filled, offset, offset + options.batchBytes - filled);
        filled += copied;
        offset += copied;
        if (filled < options.batchBytes) continue;
        handOn(batch.subarray(0, filled));
        batch = emptyBatch();
        filled = 0;
      }
    };

    body.on('data', onData);
    finished(body, (error) => {
      if (error) return fail(error);
      void handing
        .then(async () => {
          if (failed) return;
          if (filled > 0) await onBatch(batch.subarray(0, filled));
          resolve(size);
        })
        .catch(fail);
    });
  });
}
