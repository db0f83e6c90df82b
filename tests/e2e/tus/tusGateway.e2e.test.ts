import { newUser } from '#tests/support/httpClient';
import { testServiceForFile } from '#tests/support/testService';
import { freePort } from '#tests/support/freePort';
import { scratchDir } from '#tests/support/scratchDir';
import { type RunningGateway, startNginxGateway } from '#tests/deploy/nginxGateway';
import {
  TUS,
  createTus,
  fileUpload,
  headTus,
  idOf,
  patchTus,
  randomFile,
  sha256,
  tusUpload,
} from './tusFixtures';

/**
 * The nginx gateway (deploy/gateway/nginx.conf.template) in front of the service as its command API,
 * with nothing listening where the query API should be: every tus request, HEAD and OPTIONS
 * included, must reach the command API, and the Location must name the gateway.
 */
const { api, service } = testServiceForFile({ TRUST_PROXY: '1' });
let gateway: RunningGateway;

beforeAll(async () => {
  gateway = await startNginxGateway({
    dir: scratchDir('tus-gateway-'),
    port: await freePort(),
    statusPort: await freePort(),
    commandApiPorts: [Number(new URL(service().url).port)],
    queryApiPorts: [await freePort()],
  });
});
afterAll(() => gateway?.stop());

test('through nginx: creation, PATCH, HEAD, OPTIONS and resume all reach the command API', async () => {
  const alice = await newUser(api);
  const bytes = randomFile(700_000);
  const created = await createTus(gateway.url, alice.token, bytes.length, { filename: 'gw.nii' });
  expect(created.status).toBe(201);
  const url = created.headers.get('location')!;
  expect(url).toMatch(new RegExp(`^${gateway.url}${TUS}[0-9a-f-]{36}$`));
  expect((await patchTus(url, alice.token, 0, bytes.subarray(0, 300_000))).status).toBe(204);
  const head = await headTus(url, alice.token);
  expect(head.status).toBe(200);
  expect(head.headers.get('upload-offset')).toBe('300000');
  const options = await fetch(`${gateway.url}${TUS}`, { method: 'OPTIONS' });
  expect(options.status).toBe(204);
  expect(options.headers.get('tus-version')).toBe('1.0.0');
  await tusUpload(gateway.url, alice.token, bytes, { filename: 'gw.nii' }, { uploadUrl: url });
  expect((await fileUpload(api, alice.token, idOf(url))).status).toBe(200);
  const download = await fetch(`${service().url}/api/file-uploads/${idOf(url)}/download/`, {
    headers: { Authorization: `Token ${alice.token}` },
  });
  expect(sha256(Buffer.from(await download.arrayBuffer()))).toBe(sha256(bytes));
  const tusLines = gateway.accessLog().filter((line) => line.uri.startsWith(TUS));
  expect(new Set(tusLines.map((line) => line.method))).toEqual(new Set(['POST', 'PATCH', 'HEAD', 'OPTIONS']));
  expect(tusLines.every((line) => line.status < 300)).toBe(true);
});
