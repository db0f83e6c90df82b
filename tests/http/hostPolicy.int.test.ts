import { HostPolicy, hostMatches, hostnameOf } from '#shared/http/hostPolicy';
import { loadConfig } from '#shared/config/config';
import { type DemoServer, startDemo } from './support/demoApp';
import { rawRequest } from './support/rawRequest';

async function baseUrlSeen(server: DemoServer, host: string) {
  const res = await rawRequest(`${server.url}/api/widgets/`, { headers: { Host: host } });
  return { status: res.status, body: JSON.parse(res.body) as Record<string, unknown> };
}

describe('with ALLOWED_HOSTS', () => {
  let server: DemoServer;
  beforeAll(async () => {
    server = await startDemo({ allowedHosts: ['api.example.org', '.example.net'] });
  });
  afterAll(() => server.close());

  test('listed hosts (and subdomains of a ".domain" entry) are served, with links to them', async () => {
    expect(await baseUrlSeen(server, 'api.example.org')).toMatchObject({
      status: 200,
      body: { baseUrl: 'http://api.example.org' },
    });
    expect((await baseUrlSeen(server, 'EU.Example.NET:8443')).body.baseUrl).toBe(
      'http://EU.Example.NET:8443',
    );
    expect((await baseUrlSeen(server, 'example.net')).status).toBe(200);
  });

  test('any other host is 400 "Invalid Host header.", even this machine', async () => {
    for (const host of ['evil.example.com', 'example.org', 'api.example.org.evil.com', 'localhost', 'a b']) {
      expect([host, await baseUrlSeen(server, host)]).toEqual([
        host,
        { status: 400, body: { detail: 'Invalid Host header.' } },
      ]);
    }
  });

  test('system endpoints stay reachable by address (health probes)', async () => {
    const res = await rawRequest(`${server.url}/health/`, { headers: { Host: '10.1.2.3:8000' } });
    expect(res.status).not.toBe(400);
  });
});

test('PUBLIC_BASE_URL wins over any Host', async () => {
  const server = await startDemo({ publicBaseUrl: 'https://catalogue.example.org/' });
  try {
    expect((await baseUrlSeen(server, 'evil.example.com')).body.baseUrl).toBe(
      'https://catalogue.example.org',
    );
  } finally {
    await server.close();
  }
});

test('without either, a foreign or malformed Host falls back to the address the request came in on', async () => {
  const server = await startDemo();
  try {
    const { port } = new URL(server.url);
    for (const host of ['evil.example.com', `evil.example.com:${port}`, 'bad host', '[::1']) {
      expect([host, (await baseUrlSeen(server, host)).body.baseUrl]).toEqual([host, server.url]);
    }
    expect((await baseUrlSeen(server, `localhost:${port}`)).body.baseUrl).toBe(`http://localhost:${port}`);
    expect((await baseUrlSeen(server, '127.9.9.9')).body.baseUrl).toBe('http://127.9.9.9');
  } finally {
    await server.close();
  }
});

test('host parsing and matching', () => {
  expect(hostnameOf('API.example.org.:80')).toBe('api.example.org');
  expect(hostnameOf('[::1]:8000')).toBe('[::1]');
  expect(hostnameOf('evil.com/path')).toBeUndefined();
  expect(hostnameOf('user@evil.com')).toBeUndefined();
  expect(hostnameOf(undefined)).toBeUndefined();
  expect(hostMatches('a.example.org', '.example.org')).toBe(true);
  expect(hostMatches('badexample.org', '.example.org')).toBe(false);
  expect(hostMatches('anything', '*')).toBe(true);
  expect(new HostPolicy({ allowedHosts: [] })).toBeInstanceOf(HostPolicy);
});

test('ALLOWED_HOSTS is validated at start-up', () => {
  expect(loadConfig({ ALLOWED_HOSTS: ' api.example.org, .Example.net ,*,[::1]' }).allowedHosts).toEqual([
    'api.example.org',
    '.example.net',
    '*',
    '[::1]',
  ]);
  expect(loadConfig({}).allowedHosts).toEqual([]);
  expect(() => loadConfig({ ALLOWED_HOSTS: 'https://api.example.org' })).toThrow(/ALLOWED_HOSTS/);
  expect(() => loadConfig({ ALLOWED_HOSTS: 'api.example.org:8000' })).toThrow(/ALLOWED_HOSTS/);
});
