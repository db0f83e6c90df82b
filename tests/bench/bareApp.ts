import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';

/** The baseline: Express answering the same JSON with nothing in between (no auth, limits, logs). */
export async function startBareApp(
  body: unknown,
  route: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const app = express();
  app.get(route, (_req, res) => {
    res.json(body);
  });
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
