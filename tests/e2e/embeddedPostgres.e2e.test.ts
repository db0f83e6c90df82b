import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { client, newUser } from '#tests/support/httpClient';
import { freePort } from '#tests/support/freePort';
import { serviceEnv } from '#tests/support/serviceEnv';
import { spawnAllInOne, type ServiceProcess } from '#tests/support/spawnService';
import { waitFor } from '#tests/support/waitFor';

/**
 * The all-in-one as an operator runs it: real processes, no DATABASE_URL, no EMBEDDED_PG_PORT.
 * Two of them on one machine (distinct PORT and DATA_DIR) each start their own embedded
 * PostgreSQL; killing one's postmaster is survived without anyone stepping in.
 */
interface Instance {
  readonly dataDir: string;
  service: ServiceProcess;
}

const instances: Instance[] = [];

async function startInstance(): Promise<Instance> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'catalogue-embedded-e2e-'));
  chmodSync(dataDir, 0o755); // as root the cluster runs as `postgres`, which must reach its data dir
  const instance: Instance = { dataDir, service: undefined as unknown as ServiceProcess };
  instances.push(instance);
  // No DATABASE_URL, even if the environment running the tests has one.
  const env = serviceEnv('', dataDir, String(await freePort()), { EMBEDDED_PG_PORT: '', LOG_LEVEL: 'info' });
  instance.service = await spawnAllInOne(env, 120_000);
  return instance;
}

/** The pid in postmaster.pid, if that process is alive. */
function postmasterPid(dataDir: string): number | undefined {
  const file = path.join(dataDir, 'postgres', 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? pid : undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A restart of the embedded PostgreSQL and of the pools behind it, on a busy machine. */
const SLOW = { timeoutMs: 90_000, intervalMs: 200 };

/** SIGTERM: the service closes its pools and stops its PostgreSQL, as on a normal shutdown. */
async function stopInstance({ service, dataDir }: Instance): Promise<void> {
  if (isAlive(service.pid)) process.kill(service.pid, 'SIGTERM');
  await waitFor('the service to exit', () => !isAlive(service.pid), {
    timeoutMs: 30_000,
    intervalMs: 200,
  }).catch(() => undefined);
  await service.kill(); // no-op when it is gone; SIGKILL otherwise
  const leftover = postmasterPid(dataDir);
  if (leftover !== undefined) process.kill(leftover, 'SIGINT');
  await waitFor('PostgreSQL to stop', () => postmasterPid(dataDir) === undefined, {
    timeoutMs: 30_000,
    intervalMs: 200,
  });
  rmSync(dataDir, { recursive: true, force: true });
}

let a: Instance;
let b: Instance;
beforeAll(async () => {
  a = await startInstance();
  b = await startInstance();
}, 300_000);
afterAll(async () => {
  for (const instance of instances) await stopInstance(instance);
});

/**
 * The supervision log lines seen so far. The child keeps only its latest output lines, so each
 * call adds what is visible now to what earlier calls saw (lines carry timestamps: no duplicates).
 */
const seenLines = new Map<ServiceProcess, Set<string>>();
function supervisionLines(service: ServiceProcess): string[] {
  const seen = seenLines.get(service) ?? new Set<string>();
  seenLines.set(service, seen);
  for (const line of service.output().split('\n'))
    if (line.includes('embedded PostgreSQL') && /exited unexpectedly|is back|giving up/.test(line))
      seen.add(line);
  return [...seen];
}

test('two all-in-ones side by side each run their own embedded PostgreSQL on a free port', async () => {
  for (const { service, dataDir } of [a, b]) {
    const api = client(service.url);
    expect((await api.get('/health/')).status).toBe(200);
    const user = await newUser(api);
    expect((await api.get('/api/auth/me/', { token: user.token })).body.email).toBe(user.email);
    expect(postmasterPid(dataDir)).toBeDefined();
  }
  const port = (dataDir: string): string =>
    readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[3]!;
  expect(port(a.dataDir)).not.toBe(port(b.dataDir));
  expect(port(a.dataDir)).not.toBe('54329');
}, 300_000);

test('kill -9 of the postmaster: it is restarted and writes and reads work again, with no one stepping in', async () => {
  const [victim, bystander] = [a, b];
  const killed = postmasterPid(victim.dataDir)!;
  process.kill(killed, 'SIGKILL');

  const restarted = await waitFor(
    'a new postmaster',
    () => {
      supervisionLines(victim.service);
      return postmasterPid(victim.dataDir);
    },
    { ...SLOW, until: (pid) => pid !== undefined && pid !== killed },
  );
  expect(restarted).not.toBe(killed);
  const api = client(victim.service.url);
  // A write (register, appended through the service's pools) then a read of it (login reads the
  // user's stream back and checks the password): retried until the pools have reconnected.
  const user = await waitFor(
    'a write then a read',
    () => {
      supervisionLines(victim.service);
      return newUser(api);
    },
    SLOW,
  );
  expect(user.token).toMatch(/^bic_lt_/);
  // The supervised loops (projection runner, listener) come back after their backoff, which can
  // end after the request pools have reconnected: readiness follows, it need not be there yet.
  await waitFor(
    '/health/ 200',
    async () => {
      supervisionLines(victim.service);
      return (await api.get('/health/')).status;
    },
    { ...SLOW, until: (status) => status === 200 },
  );
  expect(supervisionLines(victim.service)).toEqual([
    expect.stringContaining('embedded PostgreSQL exited unexpectedly; restarting it'),
    expect.stringContaining('embedded PostgreSQL is back'),
  ]);

  // The other instance never noticed.
  expect(supervisionLines(bystander.service)).toEqual([]);
  await expect(newUser(client(bystander.service.url))).resolves.toMatchObject({ token: expect.any(String) });
}, 300_000);
