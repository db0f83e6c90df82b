import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './freePort';
import { serviceEnv } from './serviceEnv';
import { spawnAllInOne, type ServiceProcess } from './spawnService';
import { waitFor } from './waitFor';

const REPO_ROOT = path.resolve(__dirname, '../..');

export interface EmbeddedService {
  /** The running all-in-one; throws before the file's beforeAll has started it. */
  readonly service: () => ServiceProcess;
  /** Its DATA_DIR (the embedded PostgreSQL is in `<dataDir>/postgres`). */
  readonly dataDir: () => string;
}

/**
 * The all-in-one as an operator runs it, in a child process on its embedded PostgreSQL (no
 * DATABASE_URL), for all the tests of a file: started before them, stopped with SIGTERM after them
 * (so it stops its PostgreSQL; a SIGKILL would leave the postmaster behind).
 */
export function embeddedServiceForFile(name: string, env: Record<string, string> = {}): EmbeddedService {
  let dataDir: string | undefined;
  let service: ServiceProcess | undefined;
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), `catalogue-${name}-`));
    chmodSync(dataDir, 0o755); // as root the cluster runs as `postgres`, which must reach its data dir
    service = await spawnAllInOne(
      serviceEnv('', dataDir, String(await freePort()), { EMBEDDED_PG_PORT: '', ...env }),
      120_000,
    );
  }, 150_000);
  afterAll(async () => {
    if (service) {
      const { pid } = service;
      process.kill(pid, 'SIGTERM');
      await waitFor('the service to exit', () => Promise.resolve(isAlive(pid)), {
        timeoutMs: 30_000,
        intervalMs: 200,
        until: (alive) => !alive,
      }).catch(() => undefined);
      await service.kill();
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined)
      throw new Error('the embedded service has not started yet: use it in a test or a hook');
    return value;
  };
  return { service: () => started(service), dataDir: () => started(dataDir) };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pid of the postmaster serving a DATA_DIR, from its postmaster.pid; undefined when none runs. */
export function postmasterPid(dataDir: string): number | undefined {
  const file = path.join(dataDir, 'postgres', 'postmaster.pid');
  return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : undefined;
}

export interface ScriptRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs an operator tool (e.g. `services/projector/verifyLedger.ts`) from the TypeScript source as
 * its npm script would run the build, with no database configured beyond `env`.
 */
export function runOperatorScript(
  script: string,
  env: Record<string, string>,
  args: readonly string[] = [],
): Promise<ScriptRun> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
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
