import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { waitFor } from './waitFor';

const REPO_ROOT = path.resolve(__dirname, '../..');
const KEPT_OUTPUT_LINES = 80;

export interface ServiceProcess {
  readonly url: string;
  readonly pid: number;
  /** The child's latest output lines, for failure messages. */
  output(): string;
  /** SIGKILL, as a crash would: no shutdown hooks run. Resolves once the process is gone. */
  kill(): Promise<void>;
}

/** Runs the all-in-one as a real child process (see spawnService). */
export function spawnAllInOne(
  env: Readonly<Record<string, string>>,
  readyTimeoutMs = 30_000,
): Promise<ServiceProcess> {
  return spawnService('services/all-in-one/main.ts', env, readyTimeoutMs);
}

/**
 * Runs a service entry point (e.g. services/query-api/main.ts) as a real child process, ready once
 * its /health/ answers 200. A TypeScript one with `node --import tsx` rather than the tsx CLI: the
 * CLI runs the service in a grandchild, which a SIGKILL to the CLI would leave running.
 */
export async function spawnService(
  entryPoint: string,
  env: Readonly<Record<string, string>>,
  readyTimeoutMs = 30_000,
): Promise<ServiceProcess> {
  // A compiled entry point (dist/) runs as `npm start` runs it: without tsx's loader, whose hooks
  // and source maps a production process does not carry.
  const loader = entryPoint.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const child = spawn(process.execPath, [...loader, entryPoint], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines = keepOutput(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Safety net: a test process that exits without afterAll must not leave the service running.
  const killOnExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killOnExit);
  void exited.then(() => process.off('exit', killOnExit));

  const url = `http://127.0.0.1:${env.PORT}`;
  const service: ServiceProcess = {
    url,
    pid: child.pid ?? -1,
    output: () => lines.join('\n'),
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  try {
    await waitForHealth(url, exited, readyTimeoutMs);
  } catch (error) {
    await service.kill();
    throw new Error(`${(error as Error).message}\n--- service output ---\n${service.output()}`, {
      cause: error,
    });
  }
  return service;
}

function keepOutput(child: ChildProcess): string[] {
  const lines: string[] = [];
  const keep = (chunk: Buffer): void => {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    lines.splice(0, Math.max(0, lines.length - KEPT_OUTPUT_LINES));
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return lines;
}

/**
 * Resolves once /health/ answers 200; rejects when the process exits first or the time is up,
 * saying what the last unhealthy answer said.
 */
export async function waitForHealth(url: string, exited: Promise<void>, timeoutMs: number): Promise<void> {
  let gone = false;
  let lastBody = '';
  void exited.then(() => (gone = true));
  const status = await waitFor(
    `${url}/health/ to answer 200`,
    async () =>
      gone
        ? 'exited'
        : fetch(`${url}/health/`, { signal: AbortSignal.timeout(2000) }).then(
            async (response) => {
              const body = await response.text(); // also frees the connection
              if (response.status !== 200) lastBody = body;
              return response.status;
            },
            () => 0,
          ),
    {
      timeoutMs,
      intervalMs: 100,
      until: (answer) => answer === 200 || answer === 'exited',
      detail: () => `last unhealthy /health/ answer: ${lastBody.slice(0, 2000)}`,
    },
  );
  if (status === 'exited') throw new Error('the service exited before it became healthy');
}
