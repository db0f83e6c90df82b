import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { ClientClosedRequestError } from '#shared/errors/httpErrors';
import { ApiRequestContext } from './apiRequestContext';

/** A server whose one route hands its context to `handle`. */
async function serve(handle: (ctx: ApiRequestContext<undefined>, res: express.Response) => void) {
  const app = express();
  app.get('/', (req, res) => {
    handle(new ApiRequestContext(req, res, undefined, {}, {}, undefined, 'r1', () => 'http://x'), res);
  });
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

test('the signal aborts with a ClientClosedRequestError when the client hangs up before the answer', async () => {
  let aborted!: (reason: unknown) => void;
  const reason = new Promise<unknown>((resolve) => (aborted = resolve));
  const server = await serve((ctx) => {
    expect(ctx.signal.aborted).toBe(false);
    ctx.signal.addEventListener('abort', () => aborted(ctx.signal.reason));
  });
  try {
    const request = http.get({ port: server.port, host: '127.0.0.1', path: '/' });
    request.on('error', () => undefined);
    await new Promise((resolve) => setTimeout(resolve, 100));
    request.destroy();
    expect(await reason).toBeInstanceOf(ClientClosedRequestError);
  } finally {
    await server.close();
  }
});

test('the signal never aborts for an answer sent, even when asked for after it', async () => {
  const signals: AbortSignal[] = [];
  const server = await serve((ctx, res) => {
    signals.push(ctx.signal);
    res.json({ ok: true });
    res.on('close', () => signals.push(ctx.signal));
  });
  try {
    const body = await (await fetch(`http://127.0.0.1:${server.port}/`)).json();
    expect(body).toEqual({ ok: true });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(signals.length).toBe(2);
    expect(signals.every((signal) => !signal.aborted)).toBe(true);
  } finally {
    await server.close();
  }
});
