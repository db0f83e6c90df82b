import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';

/**
 * The information baseline of issue 22 for search: Express answering `?search=` from a bare
 * in-memory index of the catalogue's names (an array scanned for the lowercased text, newest match
 * first), with nothing else: no ranking, typos, other fields, visibility, auth or read models.
 * `names[id]` is brain `id`'s name.
 */
export async function startBareSearchApp(
  names: readonly (string | undefined)[],
  route: string,
  pageSize: number,
): Promise<{ url: string; close(): Promise<void> }> {
  const lower = names.map((name) => name?.toLowerCase());
  const app = express();
  app.get(route, (req, res) => {
    const text = typeof req.query.search === 'string' ? req.query.search.trim().toLowerCase() : '';
    const results: { id: number; name: string }[] = [];
    let count = 0;
    for (let id = lower.length - 1; id > 0; id--) {
      const name = lower[id];
      if (name === undefined || !name.includes(text)) continue;
      count++;
      if (results.length < pageSize) results.push({ id, name: names[id]! });
    }
    res.json({ count, next: null, previous: null, results });
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
