import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { waitFor } from '#tests/support/waitFor';

export const REPO_ROOT = path.resolve(__dirname, '../..');

export interface ClusterProcess {
  readonly name: string;
  readonly kind: string;
  readonly port: number;
}

export interface ClusterInfo {
  readonly gateway: string;
  readonly gatewayStatusPort: number;
  readonly processes: readonly ClusterProcess[];
}

export interface RunningCluster {
  readonly info: ClusterInfo;
  readonly dataDir: string;
  output(): string;
  /** SIGTERM to start:cluster (as Ctrl-C), then SIGKILL of its whole process group if it lingers. */
  stop(): Promise<void>;
}

/**
 * `npm run start:cluster` as an operator runs it, in its own process group (so that whatever it
 * started can be killed together if it does not stop), ready once it prints the gateway URL.
 */
export async function startCluster(
  env: Record<string, string>,
  dataDir: string,
  timeoutMs: number,
): Promise<RunningCluster> {
  const child = spawn('npm', ['run', '--silent', 'start:cluster'], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env, DATA_DIR: dataDir },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-200_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const signalGroup = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // already gone
    }
  };
  const killGroup = (): void => signalGroup('SIGKILL');
  const groupAlive = (): boolean => {
    try {
      process.kill(-child.pid!, 0);
      return true;
    } catch {
      return false;
    }
  };
  process.once('exit', killGroup);
  const cluster: RunningCluster = {
    get info() {
      return JSON.parse(readFileSync(path.join(dataDir, 'cluster', 'cluster.json'), 'utf8')) as ClusterInfo;
    },
    dataDir,
    output: () => output,
    async stop() {
      // As Ctrl-C in a terminal: the whole foreground group (npm, start:cluster, pm2-runtime and the
      // services) gets the signal; start:cluster stops PM2, which stops everything it runs.
      signalGroup('SIGTERM');
      const gone = await waitFor('the cluster to stop', () => !groupAlive(), {
        timeoutMs: 45_000,
        intervalMs: 250,
      }).then(
        () => true,
        () => false,
      );
      if (!gone) killGroup();
      await exited;
      stopGatewayIfLeft(dataDir);
      process.off('exit', killGroup);
    },
  };
  try {
    const failed = exited.then(() => {
      throw new Error(`start:cluster exited with ${child.exitCode}:\n${output.slice(-5000)}`);
    });
    failed.catch(() => undefined);
    await Promise.race([
      failed,
      waitFor(
        'start:cluster to print the gateway URL',
        () => /\[cluster\] gateway: (\S+)/.exec(output)?.[1],
        {
          timeoutMs,
          intervalMs: 200,
          detail: () => output.slice(-5000),
        },
      ),
    ]);
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}

/** nginx runs in a process group of its own (PM2 starts it so): never leave one behind. */
function stopGatewayIfLeft(dataDir: string): void {
  try {
    process.kill(
      Number(readFileSync(path.join(dataDir, 'cluster/gateway/nginx.pid'), 'utf8').trim()),
      'SIGKILL',
    );
  } catch {
    // stopped by PM2, as it should be
  }
}

/** The pid of the service listening on `port` (its PORT variable), found in /proc. */
export function pidOfPort(port: number): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (!cmdline.includes('dist/services/')) continue;
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (environ.includes(`PORT=${port}`)) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no service process with PORT=${port}`);
}

export interface RunningPrometheus {
  readonly url: string;
  query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  stop(): Promise<void>;
}

/**
 * Debian's Prometheus scraping every process of the cluster each second, with deploy/prometheus's
 * alert rules, their `for:` holds cut to 0 s so that a kill of a few seconds fires them.
 */
export async function startPrometheus(
  dir: string,
  targetsFile: string,
  port: number,
): Promise<RunningPrometheus> {
  const alerts = readFileSync(path.join(REPO_ROOT, 'deploy/prometheus/alerts.yml'), 'utf8').replace(
    /^(\s+)for: \S+$/gm,
    '$1for: 0s',
  );
  writeFileSync(path.join(dir, 'alerts.yml'), alerts);
  writeFileSync(
    path.join(dir, 'prometheus.yml'),
    [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 1s',
      '  evaluation_interval: 1s',
      'rule_files:',
      '  - alerts.yml',
      'scrape_configs:',
      '  - job_name: catalogue',
      '    metrics_path: /metrics/',
      '    file_sd_configs:',
      `      - files: ['${targetsFile}']`,
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(
    process.env.PROMETHEUS ?? 'prometheus',
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString()).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const killOnExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    'Prometheus to be ready',
    () =>
      fetch(`${url}/-/ready`).then(
        (r) => r.ok,
        () => false,
      ),
    { timeoutMs: 30_000, intervalMs: 200, detail: () => errors },
  );
  return {
    url,
    async query(expr) {
      const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
      const body = (await response.json()) as { status: string; data?: { result: never[] }; error?: string };
      if (body.status !== 'success') throw new Error(`${expr}: ${body.error}`);
      return body.data!.result;
    },
    async stop() {
      process.off('exit', killOnExit);
      child.kill('SIGTERM');
      await exited;
    },
  };
}
