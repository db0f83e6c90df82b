import type { IncomingMessage } from 'node:http';

/** How long the rest of a body past the bound is still read and dropped (nginx's lingering_time). */
export const LINGER_MS = 30_000;

/**
 * Reads and drops the rest of a rejected request body. A client that is still sending does not
 * read the response, so stopping to read would leave it blocked, and closing the connection under
 * data not yet read resets it: the client (or a proxy such as nginx, which sends the whole body
 * before it reads the answer) then loses the answer already waiting in its receive buffer. So
 * past maxBytes the rest is still read, for lingerMs at most, and only then is the connection
 * closed: like nginx's lingering close, what a client can make the server read is bounded in time.
 */
export function discardRequestBody(req: IncomingMessage, maxBytes: number, lingerMs = LINGER_MS): void {
  if (req.readableEnded || req.destroyed) return;
  let discarded = 0;
  let lingering: NodeJS.Timeout | undefined;
  const stop = (): void => clearTimeout(lingering);
  const onData = (chunk: Buffer): void => {
    discarded += chunk.length;
    if (discarded <= maxBytes || lingering) return;
    lingering = setTimeout(() => {
      req.off('data', onData);
      req.destroy();
    }, lingerMs);
    lingering.unref();
  };
  req.on('data', onData);
  req.once('end', stop);
  req.once('close', stop);
  req.resume();
}
