import type { IncomingMessage } from 'node:http';
import { BoundaryMaskingHash, multipartDelimiter } from './boundaryMaskingHash';

/** The fingerprint of a body the handler streams (multipart): hashed as the bytes go by. */
export interface BodyTap {
  /** Reads (and hashes) whatever the handler left unread, then the digest of the whole body. */
  digest(): Promise<Buffer>;
}

function drained(req: IncomingMessage): Promise<void> {
  if (req.readableEnded) return Promise.resolve();
  return new Promise((resolve, reject) => {
    req.once('end', () => resolve());
    req.once('error', reject);
    req.once('close', () =>
      req.readableEnded ? resolve() : reject(new Error('the request body was cut off')),
    );
    req.resume();
  });
}

/**
 * Every chunk a consumer takes from a readable passes through its emit('data') (piping, 'data'
 * listeners and read() alike), so wrapping emit sees the body without buffering it and without
 * changing how the handler reads it. Install it before anything reads the body.
 */
export function tapRequestBody(req: IncomingMessage): BodyTap {
  const hash = new BoundaryMaskingHash(multipartDelimiter(req.headers['content-type']));
  const emit = req.emit.bind(req);
  req.emit = ((event: string | symbol, ...args: unknown[]): boolean => {
    if (event === 'data' && Buffer.isBuffer(args[0])) hash.update(args[0]);
    return emit(event, ...args);
  }) as IncomingMessage['emit'];
  let digest: Promise<Buffer> | undefined;
  return { digest: () => (digest ??= drained(req).then(() => hash.digest())) };
}
