import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { freePort } from '../freePort';

const REPO_ROOT = path.resolve(__dirname, '../../..');
const SERVER_PROCESS = path.join(__dirname, 'privatePostgresProcess.ts');
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;
const KEPT_OUTPUT_CHARS = 4000;

/**
 * A PostgreSQL cluster of the test's own, which it may stop and start again (the run's shared
 * server must never go down). Same data directory and port across restarts, like a real server.
 */
export interface PrivatePostgres {
  /** URL of a database on this cluster. */
  url(database: string): string;
  createDatabase(prefix: string): Promise<string>;
  /** Fast shutdown (open transactions abort, committed data stays); resolves once it is down. */
  stop(): Promise<void>;
  /** Starts the stopped cluster again on the same data and port; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it if running and deletes its files. */
  dispose(): Promise<void>;
}

interface ServerRun {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  output(): string;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const root = mkdtempSync(path.join(tmpdir(), 'catalogue-faults-pg-'));
  chmodSync(root, 0o755); // as root, the server runs as the postgres user and must reach its data
  const dataDir = path.join(root, 'data');
  const port = await freePort();
  let run: ServerRun | undefined;
  let baseUrl = '';

  const start = async (): Promise<void> => {
    if (run) throw new Error('private PostgreSQL is already running');
    const started = await runServer(dataDir, port);
    run = started.run;
    baseUrl = started.url;
  };
  const stop = async (): Promise<void> => {
    const current = run;
    run = undefined;
    if (current) await stopServer(current, dataDir);
  };

  try {
    await start();
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  const url = (database: string): string => {
    const parsed = new URL(baseUrl);
    parsed.pathname = `/${database}`;
    return parsed.toString();
  };
  return {
    url,
    async createDatabase(prefix) {
      const name = `${prefix}_${Math.random().toString(36).slice(2, 10)}`;
      const admin = new Client({ connectionString: baseUrl });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`);
      } finally {
        await admin.end();
      }
      return url(name);
    },
    stop,
    start,
    async dispose() {
      try {
        await stop();
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  };
}

async function runServer(dataDir: string, port: number): Promise<{ run: ServerRun; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER_PROCESS, dataDir, String(port)], {
    cwd: REPO_ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-KEPT_OUTPUT_CHARS);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const run: ServerRun = { child, exited, output: () => output };
  const ready = new Promise<string>((resolve) => {
    child.stdout.on('data', () => {
      const match = /^ready (\S+)$/m.exec(output);
      if (match) resolve(match[1]!);
    });
  });
  const timeout = new Promise<'timeout'>((resolve) =>
    setTimeout(() => resolve('timeout'), START_TIMEOUT_MS).unref(),
  );
  const outcome = await Promise.race([ready, exited.then(() => 'exited' as const), timeout]);
  if (outcome === 'exited' || outcome === 'timeout') {
    child.kill('SIGKILL');
    await exited;
    throw new Error(`private PostgreSQL did not start (${outcome}):\n${output}`);
  }
  return { run, url: outcome };
}

async function stopServer(run: ServerRun, dataDir: string): Promise<void> {
  run.child.stdin?.end(); // the child stops the server when its stdin closes
  const timeout = new Promise<'timeout'>((resolve) =>
    setTimeout(() => resolve('timeout'), STOP_TIMEOUT_MS).unref(),
  );
  const code = await Promise.race([run.exited, timeout]);
  if (code === 0) return;
  run.child.kill('SIGKILL');
  await run.exited;
  killPostmaster(dataDir); // the server is a separate process: it would outlive its parent
  throw new Error(`private PostgreSQL did not stop cleanly (${String(code)}):\n${run.output()}`);
}

/** Immediate shutdown of a server whose controlling child is gone (best effort: it may be gone too). */
function killPostmaster(dataDir: string): void {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  try {
    if (pid > 0) process.kill(pid, 'SIGQUIT');
  } catch {
    // already gone
  }
}
