import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { client, newUser } from '#tests/support/httpClient';
import { freePort } from '#tests/support/freePort';
import { serviceEnv } from '#tests/support/serviceEnv';
import { spawnAllInOne, type ServiceProcess } from '#tests/support/spawnService';
import { waitFor } from '#tests/support/waitFor';

/**
 * verify-projections as an operator runs it beside the all-in-one: no DATABASE_URL, the service's
 * embedded PostgreSQL found through DATA_DIR. The tool joins that server (it starts no second one)
 * and leaves it running; with no server on DATA_DIR it says so and exits 2.
 */
const REPO_ROOT = path.resolve(__dirname, '../..');
let dataDir: string;
let service: ServiceProcess | undefined;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'catalogue-verify-embedded-'));
  chmodSync(dataDir, 0o755); // as root the cluster runs as `postgres`, which must reach its data dir
  const env = serviceEnv('', dataDir, String(await freePort()), { EMBEDDED_PG_PORT: '' });
  service = await spawnAllInOne(env, 120_000);
}, 150_000);

afterAll(async () => {
  if (service) {
    // SIGTERM: the service stops its PostgreSQL (a SIGKILL would leave the postmaster behind).
    process.kill(service.pid, 'SIGTERM');
    await waitFor('the service to exit', () => isAlive(service!.pid), {
      timeoutMs: 30_000,
      intervalMs: 200,
      until: (alive) => !alive,
    }).catch(() => undefined);
    await service.kill();
  }
  rmSync(dataDir, { recursive: true, force: true });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function postmasterPid(): number | undefined {
  const file = path.join(dataDir, 'postgres', 'postmaster.pid');
  return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : undefined;
}

function runScript(
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/projector/verifyProjections.ts'], {
    cwd: REPO_ROOT,
    env: { ...process.env, DATABASE_URL: '', EVENTSTORE_CONNECTION_STRING: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

test('finds the running all-in-one embedded PostgreSQL through DATA_DIR and verifies it clean', async () => {
  const api = client(service!.url);
  await newUser(api);
  const postmaster = postmasterPid();
  const run = await runScript({ DATA_DIR: dataDir });
  expect({ code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({
    code: 0,
    stdout: expect.stringMatching(
      /^verify-projections: equal to a rebuild: \d+ table\(s\) of \d+ read model\(s\)/,
    ),
    stderr: expect.stringContaining(
      `verifying the read models of the embedded PostgreSQL of ${path.join(dataDir, 'postgres')} (port `,
    ),
  });
  // The same server, still serving.
  expect(postmasterPid()).toBe(postmaster);
  expect((await api.get('/health/')).status).toBe(200);
});

test('with no DATABASE_URL and no server on DATA_DIR it says so and exits 2', async () => {
  const empty = mkdtempSync(path.join(tmpdir(), 'catalogue-verify-none-'));
  try {
    const run = await runScript({ DATA_DIR: empty });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`no PostgreSQL is running on DATA_DIR=${empty}`);
    expect(existsSync(path.join(empty, 'postgres'))).toBe(false); // nothing was started there
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});
