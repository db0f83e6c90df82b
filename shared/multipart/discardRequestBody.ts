import type { IncomingMessage } from 'node:http';

/**
 * Reads and drops the rest of a rejected request body. A client that is still sending does not
 * read the response, so stopping to read would leave it blocked or reset, and it would never see
 * the 4xx JSON. Past maxBytes the rest is not worth receiving and the connection is closed.
 */
export function discardRequestBody(req: IncomingMessage, maxBytes: number): void {
  if (req.readableEnded || req.destroyed) return;
  let discarded = 0;
  const onData = (chunk: Buffer): void => {
    discarded += chunk.length;
    if (discarded > maxBytes) {
      req.off('data', onData);
      req.destroy();
    }
  };
  req.on('data', onData);
  req.resume();
}
