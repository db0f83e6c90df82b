import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { LONE_SURROGATE_MESSAGE, NULL_CHARACTER_MESSAGE } from '#shared/infra/postgres/storableText';
import { pngChunk } from '#tests/media/imageEncoders';
import { rawRequest } from '#tests/http/support/rawRequest';
import { newUser } from '#tests/support/httpClient';
import { testServiceForFile } from '#tests/support/testService';

/** One test per defect of the bad-input sweep; each failed on the code before the fix. */
const { api, service } = testServiceForFile();
const fixtures = path.join(__dirname, '..', 'fixtures', 'images');

function form(fields: Record<string, string | Blob>): FormData {
  const data = new FormData();
  for (const [name, value] of Object.entries(fields)) data.append(name, value);
  return data;
}

function registration(n: string, overrides: Record<string, string> = {}) {
  return {
    email: `bad${n}@example.org`,
    username: `bad${n}`,
    password: 'correct-horse-battery',
    password_confirm: 'correct-horse-battery',
    first_name: 'Santiago',
    last_name: 'Cajal',
    ...overrides,
  };
}

/** Sends raw bytes and collects whatever comes back until the server closes the connection. */
function rawExchange(request: string): Promise<string> {
  const { hostname, port } = new URL(service().url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      // The server closes as soon as it has answered; a reset after the answer is fine.
      chunks.length > 0 && error.code === 'ECONNRESET'
        ? resolve(Buffer.concat(chunks).toString())
        : reject(error),
    );
    socket.on('end', () => resolve(Buffer.concat(chunks).toString()));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString()));
    socket.write(request);
  });
}

function parseRaw(response: string) {
  const [head = '', body = ''] = response.split('\r\n\r\n');
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const headers = Object.fromEntries(
    headerLines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

describe('7: registration with text PostgreSQL cannot store', () => {
  test.each([
    ['a NUL', 'a\u0000b', NULL_CHARACTER_MESSAGE],
    ['a lone surrogate', '\ud800', LONE_SURROGATE_MESSAGE],
  ])(
    '%s in first_name is 400 on the field, and the email and username stay free',
    async (_, name, message) => {
      const user = registration(`${name.length}${Date.now()}`);
      const refused = await api.post('/api/auth/register/', { json: { ...user, first_name: name } });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ first_name: [message] });

      const registered = await api.post('/api/auth/register/', { json: user });
      expect(registered.status).toBe(201);
      const login = await api.post('/api/auth/login/', {
        json: { email: user.email, password: user.password },
      });
      expect(login.status).toBe(200);
    },
  );
});

describe('8: the same characters anywhere else are 400 on their field', () => {
  let token: string;
  beforeAll(async () => {
    token = (await newUser(api)).token;
  });

  test('JSON values and keys', async () => {
    const name = await api.post('/api/tokens/', { token, json: { name: 'ci\u0000' } });
    expect([name.status, name.body]).toEqual([400, { name: [NULL_CHARACTER_MESSAGE] }]);
    const bio = await api.patch('/api/profile/', { token, json: { bio: 'x\udc00y', location: 'Madrid' } });
    expect([bio.status, bio.body]).toEqual([400, { bio: [LONE_SURROGATE_MESSAGE] }]);
    const key = await api.patch('/api/profile/', {
      token,
      json: { 'b\u0000io': 'x', nested: { list: ['\u0000'] } },
    });
    expect([key.status, key.body]).toEqual([
      400,
      { 'b\u0000io': [NULL_CHARACTER_MESSAGE], 'nested.list.0': [NULL_CHARACTER_MESSAGE] },
    ]);
  });

  test('url-encoded forms, multipart parts, query strings and paths', async () => {
    const urlencoded = await api.patch('/api/profile/', {
      token,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'location=Ma%00drid',
    });
    expect([urlencoded.status, urlencoded.body]).toEqual([400, { location: [NULL_CHARACTER_MESSAGE] }]);

    const multipart = await api.patch('/api/profile/', { token, body: form({ bio: 'raw \u0000 byte' }) });
    expect([multipart.status, multipart.body]).toEqual([400, { bio: [NULL_CHARACTER_MESSAGE] }]);

    const nameless = await api.patch('/api/profile/', {
      token,
      body: form({ '': 'x\u0000', location: 'Pavia' }),
    });
    expect([nameless.status, nameless.body.location]).toEqual([200, 'Pavia']); // a part without a name is skipped

    const query = await api.get('/api/tokens/?ordering=%00', { token });
    expect([query.status, query.body]).toEqual([400, { ordering: [NULL_CHARACTER_MESSAGE] }]);

    const protoQuery = await api.get('/api/auth/me/?__proto__=%00', { token });
    expect([protoQuery.status, protoQuery.text]).toEqual([
      400,
      JSON.stringify({ ['__proto__']: [NULL_CHARACTER_MESSAGE] }),
    ]);

    const pathParam = await api.delete('/api/tokens/%00/', { token });
    expect([pathParam.status, pathParam.body]).toEqual([400, { token_id: [NULL_CHARACTER_MESSAGE] }]);

    const profile = await api.get('/api/profile/', { token });
    expect(profile.body).toMatchObject({ bio: '', location: 'Pavia' });
  });
});

test('9: ordering by an inherited property name is ignored like any unknown field', async () => {
  const { token } = await newUser(api);
  for (const ordering of ['constructor', '__proto__', 'toString', '-hasOwnProperty', 'name,valueOf']) {
    const res = await api.get(`/api/tokens/?ordering=${ordering}`, { token });
    expect([ordering, res.status]).toEqual([ordering, 200]);
  }
});

describe('11: values the old validation let through', () => {
  let token: string;
  beforeAll(async () => {
    token = (await newUser(api)).token;
  });

  test('a TIFF avatar is refused with a message', async () => {
    const tiff = readFileSync(path.join(fixtures, 'sample-le.tif'));
    const res = await api.patch('/api/profile/', {
      token,
      body: form({ avatar: new Blob([tiff], { type: 'image/tiff' }) }),
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      avatar: [expect.stringMatching(/^TIFF images are not supported\. Upload one of: PNG/)],
    });
  });

  test('a boolean is not text; a number is', async () => {
    const bool = await api.patch('/api/profile/', { token, json: { bio: false } });
    expect([bool.status, bool.body]).toEqual([400, { bio: ['Not a valid string.'] }]);
    const number = await api.patch('/api/profile/', { token, json: { bio: 5 } });
    expect([number.status, number.body.bio]).toEqual([200, '5']);
  });

  test('integers in query strings are decimal digits', async () => {
    for (const query of [
      'page_size=1e2',
      'page=1e0',
      'page_size=0x10',
      'page=1.0',
      'page= ',
      'page=Infinity',
    ]) {
      const res = await api.get(`/api/tokens/?${query}`, { token });
      const field = query.slice(0, query.indexOf('='));
      expect([query, res.status, res.body]).toEqual([
        query,
        400,
        { [field]: ['A valid integer is required.'] },
      ]);
    }
    for (const query of ['page=1', 'page_size=%2B5', 'page=%201%20']) {
      expect([query, (await api.get(`/api/tokens/?${query}`, { token })).status]).toEqual([query, 200]);
    }
  });
});

describe('12: errors of the HTTP parser are JSON', () => {
  test.each([
    ['a 20 KB URL', `GET /api/tokens/?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`, 431],
    [
      'a 20 KB header',
      `GET /health/ HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`,
      431,
    ],
    ['a malformed request line', 'NOT HTTP AT ALL\r\n\r\n', 400],
    ['a bad header', 'GET / HTTP/1.1\r\nHost: localhost\r\nBad Header\r\n\r\n', 400],
  ])('%s', async (_, request, status) => {
    const response = parseRaw(await rawExchange(request));
    expect(response.status).toBe(status);
    expect(response.headers['content-type']).toBe('application/json');
    expect(response.headers.connection).toBe('close');
    expect(JSON.parse(response.body)).toEqual({ detail: expect.any(String) as unknown });
  });
});

describe('13: links and image size', () => {
  test("a foreign Host header never reaches a link; this machine's names do", async () => {
    const { token } = await newUser(api);
    for (const name of ['one', 'two']) await api.post('/api/tokens/', { token, json: { name } });
    const { port } = new URL(service().url);
    const nextLink = async (host: string) => {
      const res = await rawRequest(`${service().url}/api/tokens/?page=1&page_size=1`, {
        headers: { Host: host, Authorization: `Token ${token}` },
      });
      expect(res.status).toBe(200);
      return (JSON.parse(res.body) as { next: string }).next;
    };
    expect(await nextLink('evil.example.com')).toBe(`${service().url}/api/tokens/?page=2&page_size=1`);
    expect(await nextLink(`evil.example.com:${port}`)).toMatch(new RegExp(`^${service().url}/`));
    expect(await nextLink(`localhost:${port}`)).toBe(
      `http://localhost:${port}/api/tokens/?page=2&page_size=1`,
    );
    expect(await nextLink(`127.0.0.1:${port}`)).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/`));
  });

  test('a decompression bomb (a 40000×40000 PNG header) is refused as an avatar', async () => {
    const { token } = await newUser(api);
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(40_000, 0);
    ihdr.writeUInt32BE(40_000, 4);
    ihdr.set([8, 2, 0, 0, 0], 8);
    const bomb = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      pngChunk('IHDR', ihdr),
      pngChunk('IDAT', deflateSync(Buffer.alloc(64 * 1024))),
      pngChunk('IEND', Buffer.alloc(0)),
    ]);
    const res = await api.patch('/api/profile/', {
      token,
      body: form({ avatar: new Blob([bomb], { type: 'image/png' }) }),
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      avatar: ['The image is too large: 40000×40000 pixels (1600 megapixels); the limit is 50 megapixels.'],
    });
    expect((await api.get('/api/profile/', { token })).body.avatar).toBeNull();
  });
});
