import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { scratchDir } from '#tests/support/scratchDir';

const REPO_ROOT = path.resolve(__dirname, '../..');
/** The package's bin, run as `npx bic` runs it. */
export const BIC = path.join(REPO_ROOT, 'cli', 'bic.cjs');

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliOptions {
  readonly input?: string;
  readonly env?: Record<string, string>;
  readonly cwd?: string;
  readonly timeoutMs?: number;
}

/** A fresh, empty config directory for one simulated user of the CLI. */
export const freshConfigDir = (): string => scratchDir('bic-config-');

/** Environment of a CLI run: its own config dir and server; nothing inherited can point elsewhere. */
export function cliEnv(server: string, configDir: string, extra: Record<string, string> = {}) {
  const env: Record<string, string> = { ...(process.env as Record<string, string>) };
  for (const name of ['BIC_SERVER', 'BIC_TOKEN', 'BIC_CONFIG_DIR', 'XDG_CONFIG_HOME']) delete env[name];
  return { ...env, BIC_SERVER: server, BIC_CONFIG_DIR: configDir, ...extra };
}

/** Starts `bic args…` as a subprocess (stdin, stdout and stderr are pipes: not a terminal). */
export function spawnCli(
  args: readonly string[],
  env: Record<string, string>,
  cwd = REPO_ROOT,
): ChildProcess {
  return spawn(process.execPath, [BIC, ...args], { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** Runs `bic args…` to its end (bounded) and returns its exit code and output. */
export function runCli(args: readonly string[], env: Record<string, string>, options: CliOptions = {}) {
  const child = spawnCli(args, { ...env, ...options.env }, options.cwd);
  return finished(child, options.input, options.timeoutMs ?? 60_000, args);
}

export function finished(
  child: ChildProcess,
  input: string | undefined,
  timeoutMs: number,
  args: readonly string[],
) {
  return new Promise<CliResult>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`bic ${args.join(' ')} did not finish in ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin?.end(input ?? '');
  });
}
