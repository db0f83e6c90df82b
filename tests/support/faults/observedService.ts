import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from '#tests/support/freePort';
import { waitForHealth } from '#tests/support/spawnService';

const REPO_ROOT = path.resolve(__dirname, '../../..');
const ENTRY_POINT = 'services/all-in-one/main.ts';
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;
const KEPT_TAIL_LINES = 60;

/** One structured log line of the service (see shared/logging/logger.ts). */
export interface LogRecord {
  readonly level?: string;
  readonly msg?: string;
  readonly request_id?: string;
  readonly [field: string]: unknown;
}

/**
 * The all-in-one as a child process whose every log line the test can inspect. A crash of the
 * service during a fault shows as `exitCode`, not as a hung or crashed test run.
 */
export interface ObservedService {
  readonly url: string;
  /** null while running. */
  exitCode(): number | string | null;
  /** Every JSON log line so far that satisfies the predicate. */
  logged(predicate: (record: LogRecord) => boolean): LogRecord[];
  /**
   * Resolves with the first line (past or future) that satisfies the predicate; rejects after
   * timeoutMs or when the service exits first.
   */
  waitForLog(predicate: (record: LogRecord) => boolean, timeoutMs: number): Promise<LogRecord>;
  /** The latest output lines but request lines, for failure messages. */
  tail(): string;
  /** SIGTERM (graceful close), SIGKILL if that takes too long. Resolves once the process is gone. */
  stop(): Promise<void>;
}

export async function startObservedService(env: Readonly<Record<string, string>>): Promise<ObservedService> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', ENTRY_POINT], {
    cwd: REPO_ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const records: LogRecord[] = [];
  const tail: string[] = [];
  const watchers = new Set<(record: LogRecord) => void>();
  const onLine = (line: string): void => {
    const record = parseRecord(line);
    if (record?.msg !== 'request') {
      tail.push(line); // the story of a failure, without the flood of request lines
      tail.splice(0, Math.max(0, tail.length - KEPT_TAIL_LINES));
    }
    if (!record) return;
    records.push(record);
    for (const watcher of watchers) watcher(record);
  };
  createInterface({ input: child.stdout }).on('line', onLine);
  createInterface({ input: child.stderr }).on('line', onLine);
  let exit: number | string | null = null;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = code ?? signal ?? 'unknown';
      resolve();
    }),
  );
  // Safety net: a test process that dies without its afterAll must not leave the service running.
  const killOnExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killOnExit);
  void exited.then(() => process.off('exit', killOnExit));

  const service: ObservedService = {
    url: `http://127.0.0.1:${port}`,
    exitCode: () => exit,
    logged: (predicate) => records.filter(predicate),
    waitForLog: (predicate, timeoutMs) =>
      new Promise((resolve, reject) => {
        const earlier = records.find(predicate);
        if (earlier) return resolve(earlier);
        const fail = (why: string): void => {
          clearTimeout(timer);
          watchers.delete(watcher);
          reject(new Error(why));
        };
        const timer = setTimeout(() => fail(`no such log line within ${timeoutMs} ms`), timeoutMs);
        const watcher = (record: LogRecord): void => {
          if (!predicate(record)) return;
          clearTimeout(timer);
          watchers.delete(watcher);
          resolve(record);
        };
        watchers.add(watcher);
        void exited.then(() => fail(`the service exited (${String(exit)}) before such a log line`));
      }),
    tail: () => tail.join('\n'),
    async stop() {
      if (exit !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
  try {
    await waitForHealth(service.url, exited, READY_TIMEOUT_MS); // the database is up when it starts
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    throw new Error(`${(error as Error).message}\n--- service output ---\n${service.tail()}`, {
      cause: error,
    });
  }
  return service;
}

function parseRecord(line: string): LogRecord | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as LogRecord;
  } catch {
    return undefined;
  }
}
