import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Transform } from 'node:stream';

export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
}

/**
 * What to do with one request: undefined forwards it; a reply answers it here; `forwardThenFail`
 * forwards it, lets the service act, then answers the client with that status instead (a lost
 * response); `stallAfter` forwards a response but stops sending its body after that many bytes,
 * keeping the connection open (an interrupted transfer); `requestBytesPerSecond` forwards the
 * request body at that pace (a slow uplink); `cutRequestAfter` forwards that many bytes of the
 * request body, then drops both connections (a network that goes down mid-upload).
 */
export type Intercept =
  | undefined
  | { reply: { status: number; headers?: Record<string, string>; body?: string } }
  | { forwardThenFail: number }
  | { stallAfter: number }
  | { requestBytesPerSecond: number }
  | { cutRequestAfter: number; requestBytesPerSecond?: number };

/** An HTTP proxy in front of the service that records every request and can misbehave on cue. */
export async function startInterceptingProxy(
  target: string,
  decide: (req: SeenRequest, index: number) => Intercept,
) {
  const seen: SeenRequest[] = [];
  const stalled = new Set<ServerResponse>();
  const server = http.createServer((req, res) => {
    const request = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers };
    seen.push(request);
    const intercept = decide(request, seen.length - 1);
    if (intercept && 'reply' in intercept) {
      req.resume();
      res.writeHead(intercept.reply.status, intercept.reply.headers).end(intercept.reply.body ?? '');
      return;
    }
    forward(target, req, res, intercept, stalled);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    async close() {
      for (const res of stalled) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function forward(
  target: string,
  req: IncomingMessage,
  res: ServerResponse,
  intercept: Intercept,
  stalled: Set<ServerResponse>,
): void {
  const upstream = http.request(
    new URL(req.url ?? '/', target),
    { method: req.method, headers: req.headers },
    (up) => {
      if (intercept && 'forwardThenFail' in intercept) {
        up.resume();
        up.on('end', () => res.writeHead(intercept.forwardThenFail).end());
        return;
      }
      res.writeHead(up.statusCode ?? 502, up.headers);
      if (!(intercept && 'stallAfter' in intercept)) {
        up.pipe(res);
        return;
      }
      let sent = 0;
      up.on('data', (chunk: Buffer) => {
        const room = intercept.stallAfter - sent;
        if (room > 0) res.write(chunk.subarray(0, room));
        sent += chunk.length;
        if (sent >= intercept.stallAfter) {
          stalled.add(res);
          up.destroy(); // nothing more comes; the client's connection stays open, silent
        }
      });
    },
  );
  upstream.on('error', () => res.destroy());
  // A client gone before its answer (killed, aborted) closes the proxy's upstream connection too, as
  // it would the service's. Its body may have reached the proxy whole yet not all been forwarded (a
  // slow uplink): the rest is lost with the connection, so the service must not wait for it.
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  if (intercept && 'cutRequestAfter' in intercept) {
    let passed = 0;
    const source = intercept.requestBytesPerSecond
      ? req.pipe(throttle(intercept.requestBytesPerSecond))
      : req;
    source.on('data', (chunk: Buffer) => {
      const room = intercept.cutRequestAfter - passed;
      passed += chunk.length;
      if (room > 0) upstream.write(chunk.subarray(0, room));
      if (passed >= intercept.cutRequestAfter) {
        source.removeAllListeners('data');
        req.socket.destroy();
        upstream.destroy();
      }
    });
    source.on('end', () => upstream.end());
  } else if (intercept && 'requestBytesPerSecond' in intercept)
    req.pipe(throttle(intercept.requestBytesPerSecond)).pipe(upstream);
  else req.pipe(upstream);
}

const throttle = (bytesPerSecond: number): Transform =>
  new Transform({
    transform(chunk: Buffer, _encoding, done) {
      setTimeout(() => done(null, chunk), (chunk.length / bytesPerSecond) * 1000);
    },
  });
