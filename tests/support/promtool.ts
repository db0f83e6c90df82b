import { spawn } from 'node:child_process';

/** The binary to run; PROMTOOL overrides it for machines where promtool is not on PATH. */
const PROMTOOL = process.env.PROMTOOL ?? 'promtool';

export const PROMTOOL_MISSING_MESSAGE =
  `promtool not found (looked for "${PROMTOOL}"). The metrics lint tests need it and are never skipped. ` +
  'Install it with `apt-get install -y --no-install-recommends prometheus` (Debian/Ubuntu; .ci/run does ' +
  'this), or download Prometheus from https://prometheus.io/download/ and put promtool on PATH ' +
  '(or point PROMTOOL at it).';

export interface PromtoolRun {
  readonly code: number | null;
  /** stdout and stderr, interleaved as they arrived. */
  readonly output: string;
}

/**
 * Runs `promtool <args>` feeding `stdin`. Rejects with PROMTOOL_MISSING_MESSAGE when the binary
 * cannot be found.
 */
export function runPromtool(args: readonly string[], stdin = ''): Promise<PromtoolRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(PROMTOOL, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' ? new Error(PROMTOOL_MISSING_MESSAGE) : error),
    );
    child.once('close', (code) => resolve({ code, output }));
    // promtool may exit before reading all of stdin (e.g. a bad flag): that is reported by `close`.
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin);
  });
}

/**
 * `promtool check metrics` on a text exposition: one entry per line it reports, plus its exit code
 * when that is not 0. It prints nothing for a clean exposition, so clean is `[]`.
 */
export async function checkMetrics(exposition: string): Promise<string[]> {
  const { code, output } = await runPromtool(['check', 'metrics'], exposition);
  const problems = output.split('\n').filter((line) => line.trim() !== '');
  return code === 0 ? problems : [...problems, `promtool exited with ${code}`];
}
