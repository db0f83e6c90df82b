import { eventually } from '#tests/support/waitFor';
import { type DemoServer, startDemo } from './support/demoApp';
import { rawRequest } from './support/rawRequest';

let server: DemoServer;
beforeAll(async () => {
  server = await startDemo();
});
afterAll(() => server.close());

const url = (path: string): string => `${server.url}${path}`;
const postJson = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url(path), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('paths', () => {
  test.each(['/api/widgets/', '/api/widgets', '/api/widgets/5/', '/api/widgets/5'])(
    '%s is served',
    async (path) => {
      const res = await fetch(url(path));
      expect(res.status).toBe(200);
    },
  );

  test('path parameters arrive decoded', async () => {
    const res = await fetch(url('/api/widgets/homo%20sapiens/'));
    expect(await res.json()).toEqual({ id: 'homo sapiens' });
  });

  test('an unknown route is 404 JSON', async () => {
    const res = await fetch(url('/api/nothing-here/'));
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ detail: 'Not found.' });
  });

  test('a known path with another method is 405 with Allow, including methods other apps serve', async () => {
    const res = await fetch(url('/api/me'), { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, PUT, HEAD, OPTIONS');
    expect(await res.json()).toEqual({ detail: 'Method "POST" not allowed.' });
  });

  test('system paths also answer 405 for other methods', async () => {
    const res = await fetch(url('/health/'), { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });

  test('a malformed percent-encoding is 400 JSON, not HTML', async () => {
    const res = await fetch(url('/api/widgets/%E0%A4%A/'));
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/json');
  });

  test('HEAD works for GET routes and sends no body', async () => {
    const res = await fetch(url('/api/widgets/5/'), { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.text()).toBe('');
  });

  test('HEAD of an unknown route is a 404 without HTML', async () => {
    const res = await fetch(url('/nope'), { method: 'HEAD' });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/json');
  });
});

describe('JSON bodies', () => {
  test('malformed JSON is 400 with the parser reason', async () => {
    const res = await fetch(url('/api/widgets/'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"name": ',
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { detail: string };
    expect(body.detail).toMatch(/^JSON parse error - .+/);
    expect(Object.keys(body)).toEqual(['detail']);
  });

  test('validation errors are DRF field errors with human messages', async () => {
    const res = await postJson('/api/widgets/', { name: 'x'.repeat(101), size: 'big', color: 'red' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      name: ['Ensure this field has no more than 100 characters.'],
      size: ['A valid integer is required.'],
      color: ['Enter a valid hex colour.'],
    });
  });

  test('a missing required field', async () => {
    const res = await postJson('/api/widgets/', {});
    expect(await res.json()).toEqual({ name: ['This field is required.'] });
  });

  test('an empty body on a route with a schema is validated as {}', async () => {
    const res = await fetch(url('/api/widgets/'), { method: 'POST' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ name: ['This field is required.'] });
  });

  test('null where null is not allowed, and blank strings', async () => {
    const res = await postJson('/api/widgets/', { name: '', size: null });
    expect(await res.json()).toEqual({
      name: ['This field may not be blank.'],
      size: ['This field may not be null.'],
    });
  });

  test('a non-object body is a non-field error', async () => {
    const res = await postJson('/api/widgets/', [1, 2]);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      non_field_errors: ['Invalid data. Expected a dictionary, but got list.'],
    });
  });

  test('unknown fields are ignored and numeric strings coerced, like DRF', async () => {
    const res = await postJson('/api/widgets/', { name: 'w', size: '3', surprise: true });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ name: 'w', size: 3, user: null });
  });

  test('a body over the limit is 413', async () => {
    const res = await postJson('/api/widgets/', { name: 'x'.repeat(5000) });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ detail: 'Request body is too large.' });
  });

  test('an unsupported content type is 415', async () => {
    const res = await fetch(url('/api/widgets/'), {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: 'name=x',
    });
    expect(res.status).toBe(415);
    expect(await res.json()).toEqual({ detail: 'Unsupported media type "text/plain" in request.' });
  });

  test('multipart is 415 on a JSON-only route', async () => {
    const form = new FormData();
    form.append('name', 'x');
    const res = await fetch(url('/api/widgets/'), { method: 'POST', body: form });
    expect(res.status).toBe(415);
  });

  test('an unsupported JSON charset is 415', async () => {
    const res = await fetch(url('/api/widgets/'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json; charset=latin1' },
      body: '{"name":"x"}',
    });
    expect(res.status).toBe(415);
  });
});

describe('multipart routes', () => {
  const auth = { Authorization: 'Token alice' };

  test('multipart bodies are left for the handler to stream', async () => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.alloc(4096, 1)]), 'scan.nii');
    const res = await fetch(url('/api/uploads/'), { method: 'POST', headers: auth, body: form });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { streamed: number; contentType: string };
    expect(body.contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect(body.streamed).toBeGreaterThan(4096); // not limited by the 1 KiB JSON limit either
  });

  test('url-encoded forms are parsed, coerced and validated', async () => {
    const res = await fetch(url('/api/uploads/'), {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'name=a&count=5&file=x',
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ parsed: { name: 'a', count: 5, file: 'x' } });
  });

  test('JSON is accepted too, and a missing file is a field error', async () => {
    const res = await postJson('/api/uploads/', { name: 'a' }, auth);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ file: ['This field is required.'] });
  });
});

describe('query strings', () => {
  test('values are coerced and unknown parameters kept but not rejected', async () => {
    const res = await fetch(url('/api/widgets/?page=2&verified=true&zzz=1'));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { query: unknown }).query).toEqual({ page: 2, verified: true, zzz: '1' });
  });

  test('invalid values are 400 on that parameter', async () => {
    const res = await fetch(url('/api/widgets/?page=abc&verified=maybe'));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      page: ['A valid integer is required.'],
      verified: ['Must be a valid boolean.'],
    });
  });

  test('range errors', async () => {
    const res = await fetch(url('/api/widgets/?page=0'));
    expect(await res.json()).toEqual({ page: ['Ensure this value is greater than or equal to 1.'] });
  });
});

describe('authentication', () => {
  test('a required route without a token is 401 with WWW-Authenticate', async () => {
    const res = await fetch(url('/api/me/'));
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBeTruthy();
    expect(await res.json()).toEqual({ detail: 'Authentication credentials were not provided.' });
  });

  test('a bad token is 401 even on a public route', async () => {
    const res = await fetch(url('/api/widgets/'), { headers: { Authorization: 'Token stolen' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBeTruthy();
    expect(await res.json()).toEqual({ detail: 'Invalid token.' });
  });

  test('Token and Bearer principals reach the handler', async () => {
    const me = await fetch(url('/api/me/'), { headers: { Authorization: 'Token alice' } });
    expect(await me.json()).toEqual({ username: 'alice' });
    const list = await fetch(url('/api/widgets/'), { headers: { Authorization: 'Bearer bob' } });
    expect(((await list.json()) as { user: number }).user).toBe(2);
  });
});

describe('replies', () => {
  test('204 has no body', async () => {
    const res = await fetch(url('/api/widgets/5/'), {
      method: 'DELETE',
      headers: { Authorization: 'Token alice' },
    });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
  });

  test('raw replies stream', async () => {
    const res = await fetch(url('/api/files/abc/'));
    expect(res.headers.get('content-type')).toBe('text/plain');
    expect(await res.text()).toBe('hello abc');
  });

  test('a download failing before its first byte is a JSON 500', async () => {
    const res = await fetch(url('/api/files/broken/'));
    expect(res.status).toBe(500);
    expect(res.headers.get('content-type')).toBe('application/json');
  });

  test('an ETag the client already has gives 304', async () => {
    const res = await rawRequest(url('/api/widgets/5/'), { headers: { 'If-None-Match': 'W/"3"' } });
    expect(res.status).toBe(304);
    expect(res.body).toBe('');
  });

  test('an unexpected error is 500 with the request id and no internals', async () => {
    const res = await fetch(url('/api/boom/'), { headers: { 'X-Request-Id': 'boom-1' } });
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ detail: 'A server error occurred.', request_id: 'boom-1' });
    expect(text).not.toMatch(/secret|at |\.ts/);
    // Logged when the response closes, just after the client has the body.
    await eventually('the error log line', () =>
      expect(server.logs).toContainEqual(
        expect.objectContaining({
          level: 'error',
          request_id: 'boom-1',
          error: expect.objectContaining({ stack: expect.stringContaining('secret internal detail') }),
        }),
      ),
    );
  });
});

describe('read-your-writes', () => {
  test('a write waits for its position and reports it', async () => {
    const res = await postJson('/api/widgets/', { name: 'w' });
    expect(res.headers.get('x-event-position')).toBe('7.42');
    expect(server.waits).toContain('7.42');
  });

  test('a read with X-Min-Position waits for it first', async () => {
    await fetch(url('/api/widgets/'), { headers: { 'X-Min-Position': '9.99' } });
    expect(server.waits).toContain('9.99');
  });

  test('a malformed position is 400', async () => {
    const res = await fetch(url('/api/widgets/'), { headers: { 'X-Min-Position': 'soon' } });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ detail: 'Invalid X-Min-Position header.' });
  });
});

describe('request ids and logs', () => {
  test('a sane incoming X-Request-Id is echoed and given to the handler', async () => {
    const res = await fetch(url('/api/widgets/'), { headers: { 'X-Request-Id': 'abc-123' } });
    expect(res.headers.get('x-request-id')).toBe('abc-123');
    expect(((await res.json()) as { requestId: string }).requestId).toBe('abc-123');
  });

  test('an absent or unsafe one is replaced by a UUID', async () => {
    const res = await fetch(url('/api/widgets/'), { headers: { 'X-Request-Id': '<script>' } });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('one structured line per request, with the route template and the user', async () => {
    await fetch(url('/api/widgets/77/'), {
      headers: { 'X-Request-Id': 'log-1', Authorization: 'Bearer bob' },
    });
    await eventually('the request log line', () =>
      expect(server.logs).toContainEqual(
        expect.objectContaining({
          msg: 'request',
          service: 'demo',
          request_id: 'log-1',
          method: 'GET',
          route: '/api/widgets/{widget_id}/',
          status: 200,
          user_id: 2,
          duration_ms: expect.any(Number),
        }),
      ),
    );
  });
});

describe('CORS', () => {
  test('a preflight is answered 204 with the allowed methods and headers', async () => {
    const res = await fetch(url('/api/widgets/'), {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://app.example',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization,content-type',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toBe('GET,POST,PUT,PATCH,DELETE,OPTIONS');
    const allowed = res.headers.get('access-control-allow-headers')!.toLowerCase();
    expect(allowed).toContain('content-type');
    expect(allowed).toContain('authorization');
  });

  test('responses expose the headers browser clients need', async () => {
    const res = await fetch(url('/api/widgets/'), { headers: { Origin: 'https://app.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const exposed = res.headers.get('access-control-expose-headers')!.split(',');
    for (const name of [
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'Retry-After',
      'Link',
      'X-Total-Count',
      'ETag',
      'X-Request-Id',
      'X-Event-Position',
    ]) {
      expect(exposed).toContain(name);
    }
  });

  test('errors carry CORS headers too', async () => {
    const res = await fetch(url('/api/me/'), { headers: { Origin: 'https://app.example' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });
});
