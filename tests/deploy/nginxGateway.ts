import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, closeSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { waitFor } from '#tests/support/waitFor';

// The renderer is the plain CommonJS script start:cluster runs (scripts/ is not TypeScript).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const gatewayConfig = require('../../scripts/cluster/gatewayConfig.cjs') as {
  COMPOSE_OUTPUT: string;
  renderCompose(): string;
  renderCluster(options: ClusterGatewayOptions): string;
  writeClusterConfig(options: ClusterGatewayOptions): string;
};
export { gatewayConfig };

export interface ClusterGatewayOptions {
  readonly dir: string;
  readonly port: number;
  readonly statusPort: number;
  readonly commandApiPorts: readonly number[];
  readonly queryApiPorts: readonly number[];
  readonly host?: string;
}

export const NGINX = process.env.NGINX ?? 'nginx';

/** `nginx -t` of a configuration file: exit code and output. */
export function nginxTest(
  file: string,
  prefix = path.dirname(file),
): { code: number | null; output: string } {
  // Output to a file, not a pipe: a config naming /dev/stderr must open it, and a pipe of Node's is
  // a socket, which open() refuses.
  const outputFile = path.join(prefix, `nginx-t-${process.pid}.out`);
  const fd = openSync(outputFile, 'w');
  try {
    const run = spawnSync(NGINX, ['-t', '-p', prefix, '-e', 'stderr', '-c', file], {
      stdio: ['ignore', fd, fd],
    });
    if (run.error) throw run.error;
    return { code: run.status, output: readFileSync(outputFile, 'utf8') };
  } finally {
    closeSync(fd);
  }
}

export interface RunningGateway {
  readonly url: string;
  readonly dir: string;
  accessLog(): { method: string; uri: string; status: number; upstream_status: string }[];
  stop(): Promise<void>;
}

/** Debian's nginx with the cluster rendering of the gateway template, in the foreground. */
export async function startNginxGateway(options: ClusterGatewayOptions): Promise<RunningGateway> {
  chmodSync(options.dir, 0o755);
  const file = gatewayConfig.writeClusterConfig({ host: '127.0.0.1', ...options });
  const child: ChildProcess = spawn(
    NGINX,
    ['-p', options.dir, '-e', 'stderr', '-c', file, '-g', 'daemon off;'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const killOnExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const url = `http://127.0.0.1:${options.port}`;
  await waitFor(
    'the nginx gateway to answer',
    () =>
      child.exitCode !== null
        ? Promise.reject(new Error(`nginx exited: ${errors}`))
        : fetch(`http://127.0.0.1:${options.statusPort}/healthz`).then((r) => r.ok),
    { timeoutMs: 10_000, detail: () => errors },
  );
  return {
    url,
    dir: options.dir,
    accessLog: () =>
      readFileSync(path.join(options.dir, 'access.log'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as never),
    async stop() {
      process.off('exit', killOnExit);
      if (child.exitCode === null) child.kill('SIGQUIT');
      await exited;
    },
  };
}
