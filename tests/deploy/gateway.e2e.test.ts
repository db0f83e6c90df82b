import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '#tests/support/freePort';
import { client } from '#tests/support/httpClient';
import { scratchDir } from '#tests/support/scratchDir';
import { testServiceForFile } from '#tests/support/testService';
import { type RunningGateway, gatewayConfig, nginxTest, startNginxGateway } from './nginxGateway';

const ADMIN = { email: 'ops@example.org', password: 'a-long-password' };
const { service } = testServiceForFile({
  TRUST_PROXY: '1',
  ADMIN_EMAIL: ADMIN.email,
  ADMIN_PASSWORD: ADMIN.password,
});
let gateway: RunningGateway;
let staffToken: string;

beforeAll(async () => {
  const port = Number(new URL(service().url).port);
  // Writes go to a port nothing listens on: every POST through this gateway is a gateway 502.
  gateway = await startNginxGateway({
    dir: scratchDir('gateway-'),
    port: await freePort(),
    statusPort: await freePort(),
    commandApiPorts: [await freePort()],
    queryApiPorts: [port],
  });
  const login = await client(service().url).post('/api/auth/login/', { json: ADMIN });
  staffToken = login.body.token;
});
afterAll(() => gateway?.stop());

describe('the gateway template', () => {
  test('deploy/gateway/nginx.conf is the compose rendering of the template (npm run render:gateway)', () => {
    expect(readFileSync(gatewayConfig.COMPOSE_OUTPUT, 'utf8')).toBe(gatewayConfig.renderCompose());
  });

  test('both renderings pass `nginx -t` on the nginx installed here (Debian 12: 1.22)', () => {
    const dir = scratchDir('nginx-t-');
    const compose = path.join(dir, 'compose.conf');
    writeFileSync(compose, gatewayConfig.renderCompose());
    expect(nginxTest(compose)).toEqual({ code: 0, output: expect.stringContaining('test is successful') });
    const cluster = gatewayConfig.writeClusterConfig({
      dir,
      port: 18000,
      statusPort: 18081,
      commandApiPorts: [18001, 18002],
      queryApiPorts: [18003, 18004],
    });
    expect(nginxTest(cluster)).toEqual({ code: 0, output: expect.stringContaining('test is successful') });
  });
});

describe('behind the gateway', () => {
  test('links keep the port the client used (X-Forwarded-Host carries it)', async () => {
    const page = await client(gateway.url).get('/api/audit/events/?limit=1', { token: staffToken });
    expect(page.status).toBe(200);
    expect(page.body.next).toMatch(new RegExp(`^${gateway.url}/api/audit/events/\\?`));
  });

  test('with TRUST_PROXY, X-Forwarded-Port completes a forwarded host that names no port', async () => {
    const headers = { 'X-Forwarded-Host': 'localhost', 'X-Forwarded-Port': '9443' };
    const page = await client(service().url).get('/api/audit/events/?limit=1', {
      token: staffToken,
      headers,
    });
    expect(page.body.next).toMatch(/^http:\/\/localhost:9443\/api\/audit\/events\/\?/);
    const withPort = await client(service().url).get('/api/audit/events/?limit=1', {
      token: staffToken,
      headers: { ...headers, 'X-Forwarded-Host': 'localhost:8123' },
    });
    expect(withPort.body.next).toMatch(/^http:\/\/localhost:8123\//);
    const defaultPort = await client(service().url).get('/api/audit/events/?limit=1', {
      token: staffToken,
      headers: { ...headers, 'X-Forwarded-Port': '80' },
    });
    expect(defaultPort.body.next).toMatch(/^http:\/\/localhost\/api\//);
  });

  test('a POST the gateway answers 502 is JSON and logged with its own method', async () => {
    const refused = await client(gateway.url).post('/api/brains/', { json: { name: 'x' } });
    expect(refused.status).toBe(502);
    expect(refused.body).toEqual({ detail: expect.stringMatching(/^Bad gateway/) });
    const logged = gateway.accessLog().filter((line) => line.uri === '/api/brains/' && line.status === 502);
    expect(logged.map((line) => line.method)).toEqual(['POST']);
  });
});
