import type { Request, Response } from 'express';
import { formatPosition } from '#shared/eventStore/eventStore';
import type { ConsistencyGate } from '#shared/projections/consistencyGate';
import type { Reply } from './routeSpec';
import { sendJson, sendJsonText } from './sendJson';

export interface ReplyOptions {
  readonly consistency: ConsistencyGate | undefined;
  readonly consistencyTimeoutMs: number;
  /** Told when a write's position was not reached in time (the reply still goes out). */
  readonly onConsistencyTimeout: (req: Request) => void;
}

type Destroyable = NodeJS.ReadableStream & { destroy?: (error?: Error) => void };

/**
 * Streams a download. An error before the first byte rejects (the error middleware answers with
 * JSON); after it, the connection is cut because the status line is already out.
 */
function streamRaw(req: Request, res: Response, raw: Destroyable): Promise<void> {
  if (!res.hasHeader('Content-Type')) res.setHeader('Content-Type', 'application/octet-stream');
  if (req.method === 'HEAD') {
    raw.destroy?.();
    res.end();
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    raw.once('error', (error: Error) => {
      raw.unpipe(res);
      if (res.headersSent) {
        res.destroy(error);
        resolve();
      } else reject(error);
    });
    res.once('close', () => {
      if (!res.writableFinished) raw.destroy?.();
      resolve();
    });
    raw.pipe(res);
  });
}

function isFresh(req: Request, res: Response): boolean {
  return (
    (req.method === 'GET' || req.method === 'HEAD') &&
    res.statusCode === 200 &&
    res.hasHeader('ETag') &&
    req.fresh
  );
}

export async function sendReply(
  req: Request,
  res: Response,
  reply: Reply,
  options: ReplyOptions,
): Promise<void> {
  if (reply.headers) for (const name in reply.headers) res.setHeader(name, reply.headers[name]!);
  if (reply.position) {
    // Read-your-writes: answer only once the read side has caught up (bounded).
    if (options.consistency) {
      const reached = await options.consistency.waitFor(reply.position, options.consistencyTimeoutMs);
      if (!reached) options.onConsistencyTimeout(req);
    }
    res.setHeader('X-Event-Position', formatPosition(reply.position));
  }
  res.statusCode = reply.status;
  if (reply.raw) return streamRaw(req, res, reply.raw);
  if (isFresh(req, res)) res.statusCode = 304;
  if (res.statusCode === 204 || res.statusCode === 304) {
    res.end();
    return;
  }
  if (reply.json !== undefined) sendJsonText(res, reply.status, reply.json);
  else if (reply.body === undefined) res.end();
  else sendJson(res, reply.status, reply.body);
}
