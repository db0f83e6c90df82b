import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from './freePort';

const REPO_ROOT = path.resolve(__dirname, '../..');
const SERVER = path.join(__dirname, 'privatePostgresServer.ts');

export interface PrivatePostgres {
  /** URL of the `postgres` database of this cluster (same after a restart: same port). */
  readonly url: string;
  /** Fast shutdown: open connections are cut, new ones refused until start(). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the cluster and deletes its files. */
  close(): Promise<void>;
}

/**
 * A PostgreSQL cluster of one test file, on a free port with its own data directory, that the
 * test can stop and start: outages without touching the run's shared server.
 */
export async function startPrivatePostgres(timeoutMs = 60_000): Promise<PrivatePostgres> {
  const root = mkdtempSync(path.join(tmpdir(), 'catalogue-private-pg-'));
  chmodSync(root, 0o755);
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER, path.join(root, 'data'), String(port)], {
    cwd: REPO_ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const killOnExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();

  const answer = async (prefix: string): Promise<string> => {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`private PostgreSQL: no "${prefix}" in time\n${stderr}`)),
        timeoutMs,
      );
    });
    try {
      for (;;) {
        const next = await Promise.race([lines.next(), bound]);
        if (next.done) throw new Error(`private PostgreSQL exited\n${stderr}`);
        if (next.value.startsWith(prefix)) return next.value.slice(prefix.length).trim();
      }
    } finally {
      clearTimeout(timer);
    }
  };
  const command = async (line: string, reply: string): Promise<void> => {
    child.stdin.write(`${line}\n`);
    await answer(reply);
  };

  const url = await answer('ready');
  return {
    url,
    stop: () => command('stop', 'stopped'),
    start: () => command('start', 'ready'),
    async close() {
      child.stdin.end();
      await exited;
      process.off('exit', killOnExit);
      rmSync(root, { recursive: true, force: true });
    },
  };
}
