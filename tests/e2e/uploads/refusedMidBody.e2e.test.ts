import { newUser } from '#tests/support/httpClient';
import { rawConnection } from '#tests/support/rawConnection';
import { testServiceForFile } from '#tests/support/testService';

/**
 * An upload refused once its body has begun (a file name whose extension is not a format) is
 * answered at once, while the client is still sending the rest. A client (or a proxy such as
 * nginx) that sends its whole body before it reads the answer must still get that answer: the
 * service may stop reading, but must not reset the connection under data it has not read, which
 * throws away the answer waiting in the client's receive buffer.
 */
const { api, service } = testServiceForFile();

const BODY_BYTES = 160 * 1024 * 1024;
const CHUNK = Buffer.alloc(256 * 1024, 0x61);

test('a 400 answered mid-body reaches a client that sends the whole body (larger than the drain bound) first', async () => {
  const user = await newUser(api);
  const { port } = new URL(service().url);
  const connection = rawConnection(Number(port));
  const boundary = 'b'.repeat(24);
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="notes.txt"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  connection.socket.write(
    [
      'POST /api/file-uploads/ HTTP/1.1',
      `Host: 127.0.0.1:${port}`,
      `Authorization: Token ${user.token}`,
      `Content-Type: multipart/form-data; boundary=${boundary}`,
      `Content-Length: ${BODY_BYTES}`,
      '',
      '',
    ].join('\r\n'),
  );
  connection.socket.write(head);
  let sent = head.length;
  let resetWhileSending = false;
  connection.socket.on('error', () => (resetWhileSending = true));
  while (sent < BODY_BYTES && !connection.socket.destroyed) {
    const chunk = CHUNK.subarray(0, Math.min(CHUNK.length, BODY_BYTES - sent));
    const ok = connection.socket.write(chunk);
    sent += chunk.length;
    if (!ok) await Promise.race([new Promise((r) => connection.socket.once('drain', r)), connection.closed]);
  }
  await Promise.race([connection.closed, new Promise((r) => setTimeout(r, 5000))]);
  connection.socket.destroy();
  expect(resetWhileSending).toBe(false);
  expect(sent).toBe(BODY_BYTES);
  expect(connection.received()).toMatch(/^HTTP\/1\.1 400 /);
  expect(connection.received()).toContain('"file"');
});
