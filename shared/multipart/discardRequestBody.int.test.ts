import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { rawConnection } from '#tests/support/rawConnection';
import { discardRequestBody } from './discardRequestBody';

/** A client that never stops sending is read past the bound only for the lingering time, then cut. */
test('past the bound, the rest of a body is read for the lingering time only, then the connection closes', async () => {
  let readFor: Promise<void> | undefined;
  const server = http.createServer((req, res) => {
    res.writeHead(400, { 'Content-Type': 'application/json' }).end('{"detail":"no"}');
    discardRequestBody(req, 1024 * 1024, 300);
    readFor = new Promise((resolve) => req.once('close', () => resolve()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const connection = rawConnection((server.address() as AddressInfo).port);
    connection.socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000000\r\n\r\n');
    const chunk = Buffer.alloc(64 * 1024);
    const sending = setInterval(() => connection.socket.writable && connection.socket.write(chunk), 1);
    const closedAfter = await connection.closed;
    clearInterval(sending);
    await readFor;
    expect(connection.received()).toMatch(/^HTTP\/1\.1 400 /);
    // Cut by the lingering bound (300 ms after the first MiB), not left open for the 100 GB.
    expect(closedAfter).toBeLessThan(20_000);
  } finally {
    server.close();
  }
});
