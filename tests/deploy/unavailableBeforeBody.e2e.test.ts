import { Client as PgClient } from 'pg';
import { type PrivatePostgres, startPrivatePostgres } from '#tests/support/privatePostgres';
import { rawConnection } from '#tests/support/rawConnection';
import { freePort } from '#tests/support/freePort';
import { scratchDir } from '#tests/support/scratchDir';
import { type TestService, startTestService } from '#tests/support/testService';
import { type RunningGateway, startNginxGateway } from './nginxGateway';

/**
 * The database goes away; a client posts a large upload. The service answers 503 before it reads the
 * body (the token cannot be checked): the client, still sending, must be able to read that 503, not
 * see its connection reset mid-body (as nginx did in front of the services).
 */
let pg: PrivatePostgres;
let service: TestService;
let gateway: RunningGateway;

beforeAll(async () => {
  pg = await startPrivatePostgres();
  const admin = new PgClient({ connectionString: pg.url });
  await admin.connect();
  await admin.query('CREATE DATABASE unavailable');
  await admin.end();
  const url = new URL(pg.url);
  url.pathname = '/unavailable';
  service = await startTestService({ TRUST_PROXY: '1' }, url.toString());
  const port = Number(new URL(service.url).port);
  gateway = await startNginxGateway({
    dir: scratchDir('gateway-'),
    port: await freePort(),
    statusPort: await freePort(),
    commandApiPorts: [port],
    queryApiPorts: [port],
  });
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  await service?.close();
  await pg?.close();
}, 60_000);

const BODY_BYTES = 64 * 1024 * 1024;
const CHUNK = Buffer.alloc(256 * 1024, 0x61);

test.each(['service', 'gateway'])(
  'through the %s: a 503 answered before a large body is read reaches the client, still sending',
  async (through) => {
    await pg.stop();
    try {
      const { port } = new URL(through === 'service' ? service.url : gateway.url);
      const connection = rawConnection(Number(port));
      let resetWhileSending = false;
      connection.socket.on('error', () => (resetWhileSending = true));
      const boundary = 'x'.repeat(20);
      connection.socket.write(
        [
          'POST /api/file-uploads/ HTTP/1.1',
          `Host: 127.0.0.1:${port}`,
          'Authorization: Token bic_lt_0123456789abcdef0123456789ABCDEF01234567',
          `Content-Type: multipart/form-data; boundary=${boundary}`,
          `Content-Length: ${BODY_BYTES}`,
          '',
          '',
        ].join('\r\n'),
      );
      // Keep sending the whole body, as a proxy streaming an upload does (nginx reads the answer only
      // once it has sent what it was sending).
      let sent = 0;
      while (sent < BODY_BYTES && !connection.socket.destroyed) {
        const ok = connection.socket.write(CHUNK);
        sent += CHUNK.length;
        if (!ok)
          await Promise.race([new Promise((r) => connection.socket.once('drain', r)), connection.closed]);
      }
      await Promise.race([connection.closed, new Promise((r) => setTimeout(r, 5000))]);
      const received = connection.received();
      expect(received).toMatch(/^HTTP\/1\.1 503 /);
      expect(received).toMatch(/\r\nretry-after: \d+\r\n/i);
      expect(received).toContain('"detail"');
      expect(resetWhileSending).toBe(false);
      connection.socket.destroy();
    } finally {
      await pg.start();
    }
  },
  60_000,
);
