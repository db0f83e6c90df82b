import { spawn } from 'node:child_process';
import type { ProcessIdentity } from './postgresIdentity';

export interface PostmasterExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the process could not be spawned at all. */
  readonly error?: Error;
}

/** One running PostgreSQL server process that we started. */
export interface Postmaster {
  readonly pid: number;
  /** Settles when the process is gone, for whatever reason. */
  readonly exited: Promise<PostmasterExit>;
  /** Fast shutdown (committed data kept), escalating if it hangs; resolves once the process is gone. */
  stop(): Promise<void>;
}

export interface PostmasterOptions {
  readonly binary: string;
  readonly dataDir: string;
  readonly port: number;
  readonly settings: Readonly<Record<string, string>>;
  readonly identity: ProcessIdentity | undefined;
  readonly onLog?: (line: string) => void;
  /** Crash recovery replays the WAL before the server accepts connections: be generous. */
  readonly readyTimeoutMs?: number;
}

const READY = 'database system is ready to accept connections';
const KEPT_LINES = 20;

/**
 * Starts the postmaster and resolves once it accepts connections; rejects (with its last output
 * lines) if it exits first or is not ready in time. It runs in its own process group, so a Ctrl-C
 * meant for us does not reach it: we stop it ourselves, in order, after our connections close.
 */
export async function startPostmaster(options: PostmasterOptions): Promise<Postmaster> {
  const settings = Object.entries(options.settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]);
  const child = spawn(options.binary, ['-D', options.dataDir, '-p', String(options.port), ...settings], {
    ...options.identity,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { LC_ALL: 'C' },
  });
  const exited = new Promise<PostmasterExit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
  });
  const recent: string[] = [];
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const onLine = (line: string): void => {
    options.onLog?.(line);
    recent.push(line);
    if (recent.length > KEPT_LINES) recent.shift();
    if (line.includes(READY)) markReady();
  };
  // Read both pipes for the whole life of the process: a full pipe would block the server.
  for (const stream of [child.stdout, child.stderr]) splitLines(stream, onLine);

  const postmaster: Postmaster = {
    pid: child.pid ?? -1,
    exited,
    stop: () => stopProcess(child, exited),
  };
  const outcome = await Promise.race([
    ready.then(() => 'ready' as const),
    exited.then(() => 'exited' as const),
    delay(options.readyTimeoutMs ?? 120_000).then(() => 'timeout' as const),
  ]);
  if (outcome === 'ready') return postmaster;
  if (outcome === 'timeout') await postmaster.stop();
  const exit = await exited;
  const why =
    outcome === 'timeout'
      ? 'was not ready in time'
      : exit.error
        ? `could not be started (${exit.error.message})`
        : `exited before it was ready (${describeExit(exit)})`;
  throw new Error(`PostgreSQL on port ${options.port} ${why}\n${recent.join('\n')}`);
}

export function describeExit(exit: PostmasterExit): string {
  if (exit.error) return exit.error.message;
  return exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`;
}

function splitLines(stream: NodeJS.ReadableStream | null, onLine: (line: string) => void): void {
  let partial = '';
  stream?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line.trim() !== '') onLine(line);
  });
}

async function stopProcess(
  child: { kill(signal: NodeJS.Signals): boolean; exitCode: number | null; signalCode: string | null },
  exited: Promise<PostmasterExit>,
): Promise<void> {
  // SIGINT: fast shutdown; SIGQUIT: immediate (crash recovery at next start); SIGKILL: last resort.
  for (const [signal, waitMs] of [
    ['SIGINT', 60_000],
    ['SIGQUIT', 10_000],
    ['SIGKILL', 10_000],
  ] as const) {
    if (child.exitCode !== null || child.signalCode !== null) break;
    child.kill(signal);
    if ((await Promise.race([exited.then(() => true), delay(waitMs).then(() => false)])) === true) break;
  }
  await exited;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
