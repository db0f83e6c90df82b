'use strict';
/**
 * `npm run start:cluster`: the distributed topology on one machine, without containers.
 *
 *   command-api x2, query-api x2, projector x2, processor x2, relay (when KAFKA_BROKERS is set)
 *   under PM2 (`pm2-runtime`, the foreground mode of the PM2 process manager: restarts what dies,
 *   stops everything on SIGINT/SIGTERM), behind Debian's nginx as the gateway (rendered from
 *   deploy/gateway/nginx.conf.template, itself one of PM2's processes), on PostgreSQL: DATABASE_URL
 *   (and MIGRATION_DATABASE_URL), or else one embedded cluster in DATA_DIR/postgres started here once
 *   and shared by every service (roles catalogue_owner and catalogue_app).
 *
 * Serves through the gateway on PORT (default 8000; HOST, default 0.0.0.0, is the gateway's
 * address); the services listen on free loopback ports. Every other variable (ADMIN_*,
 * RATE_LIMIT_*, LOG_LEVEL, ...) reaches every service. Data: DATA_DIR (default ./data/cluster):
 * blobs shared by all services, postgres/ when embedded, cluster/ (the ecosystem file, the gateway
 * config and logs, cluster.json with every process's port, prometheus-targets.json for a
 * Prometheus file_sd_config). Counts: CLUSTER_COMMAND_APIS, CLUSTER_QUERY_APIS, CLUSTER_PROJECTORS,
 * CLUSTER_PROCESSORS, CLUSTER_RELAYS. Runs the compiled services: `npm run start:cluster` builds first.
 */
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { writeClusterConfig } = require('./gatewayConfig.cjs');

const ROOT = path.resolve(__dirname, '../..');
const DIST = path.join(ROOT, 'dist');
const PM2_RUNTIME = path.join(ROOT, 'node_modules', 'pm2', 'bin', 'pm2-runtime');
const READY_TIMEOUT_MS = Number(process.env.CLUSTER_READY_TIMEOUT_SECONDS ?? 120) * 1000;

/** The kinds of process, their entry points and how many of each by default. */
const KINDS = [
  { kind: 'command-api', variable: 'CLUSTER_COMMAND_APIS', count: 2 },
  { kind: 'query-api', variable: 'CLUSTER_QUERY_APIS', count: 2 },
  { kind: 'projector', variable: 'CLUSTER_PROJECTORS', count: 2 },
  { kind: 'processor', variable: 'CLUSTER_PROCESSORS', count: 2 },
  { kind: 'relay', variable: 'CLUSTER_RELAYS', count: 1 },
];

/** Variables of the cluster itself, not passed to the services. */
const OWN_VARIABLES = new Set([
  'PORT',
  'HOST',
  'CLUSTER_READY_TIMEOUT_SECONDS',
  ...KINDS.map((k) => k.variable),
]);

function say(message) {
  process.stdout.write(`[cluster] ${message}\n`);
}

function count(spec) {
  const raw = process.env[spec.variable];
  if (raw === undefined || raw === '') return spec.count;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 16)
    throw new Error(`${spec.variable} must be 0-16, got "${raw}"`);
  return value;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function findNginx() {
  const candidates = [process.env.NGINX, 'nginx', '/usr/sbin/nginx'].filter(Boolean);
  for (const candidate of candidates) {
    const probe = spawnSync(candidate, ['-v'], { stdio: 'ignore' });
    if (!probe.error && probe.status === 0) return candidate;
  }
  throw new Error('nginx not found: install it (Debian: apt-get install nginx) or set NGINX to its path');
}

/** One embedded PostgreSQL for every service (the all-in-one's cluster, roles and database). */
async function startEmbeddedPostgres(dataDir) {
  const { startEmbeddedPostgres } = require(path.join(DIST, 'shared/infra/postgres/embeddedPostgres.js'));
  const { provisionDatabase } = require(path.join(DIST, 'shared/infra/postgres/provisionDatabase.js'));
  const { DATABASE, ROLES } = require(path.join(DIST, 'shared/platform/openInfrastructure.js'));
  const { DEFAULT_SCHEMA } = require(path.join(DIST, 'shared/eventStore/postgres/sqlNames.js'));
  say(`starting the embedded PostgreSQL in ${dataDir}`);
  const embedded = await startEmbeddedPostgres({
    dataDir,
    loginRoles: [ROLES.owner, ROLES.app],
    onGiveUp: (error) => {
      say(`the embedded PostgreSQL is down for good: ${error.message}; stopping`);
      process.kill(process.pid, 'SIGTERM');
    },
  });
  await provisionDatabase({
    superuserUrl: embedded.connectionString('postgres'),
    database: DATABASE,
    roles: ROLES,
    ownerSchema: DEFAULT_SCHEMA,
  });
  return {
    databaseUrl: embedded.connectionString(DATABASE, ROLES.app),
    migrationUrl: embedded.connectionString(DATABASE, ROLES.owner),
    stop: () => embedded.stop(),
  };
}

function serviceEnvironment(database, dataDir) {
  const env = {};
  for (const [name, value] of Object.entries(process.env)) if (!OWN_VARIABLES.has(name)) env[name] = value;
  return {
    NODE_ENV: 'production',
    // One hop behind the gateway, which appends the peer address to X-Forwarded-For.
    TRUST_PROXY: '1',
    ...env,
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: database.databaseUrl,
    ...(database.migrationUrl ? { MIGRATION_DATABASE_URL: database.migrationUrl } : {}),
  };
}

async function planProcesses() {
  const processes = [];
  for (const spec of KINDS) {
    let n = count(spec);
    if (spec.kind === 'relay' && n > 0 && !process.env.KAFKA_BROKERS) {
      say('no relay: KAFKA_BROKERS is not set (the relay publishes to Kafka)');
      n = 0;
    }
    for (let i = 1; i <= n; i += 1)
      processes.push({ name: `${spec.kind}-${i}`, kind: spec.kind, port: await freePort() });
  }
  return processes;
}

function ecosystem(processes, gateway, clusterDir) {
  const logs = path.join(clusterDir, 'logs');
  fs.mkdirSync(logs, { recursive: true });
  const common = {
    cwd: ROOT,
    autorestart: true,
    // A crash loop backs off; a process that ran a while restarts after 1 s.
    restart_delay: 1000,
    exp_backoff_restart_delay: 200,
    min_uptime: 5000,
    max_restarts: 1000,
    // The services close their connections on SIGTERM and force-exit after 15 s.
    kill_timeout: 20000,
    merge_logs: true,
  };
  const apps = processes.map((p) => ({
    ...common,
    name: p.name,
    script: path.join(DIST, 'services', p.kind, 'main.js'),
    exec_mode: 'fork',
    instances: 1,
    env: { PORT: String(p.port) },
    out_file: path.join(logs, `${p.name}.log`),
    error_file: path.join(logs, `${p.name}.log`),
  }));
  apps.push({
    ...common,
    name: 'gateway',
    script: gateway.nginx,
    interpreter: 'none',
    args: ['-p', gateway.dir, '-c', gateway.config, '-e', 'stderr', '-g', 'daemon off;'],
    kill_timeout: 5000,
    out_file: path.join(logs, 'gateway.log'),
    error_file: path.join(logs, 'gateway.log'),
  });
  return { apps };
}

/** nginx runs in a process group of its own: if PM2 could not stop it (PM2 itself was killed), do. */
function stopLeftoverGateway(pidFile) {
  let pid;
  try {
    pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
  } catch {
    return;
  }
  try {
    process.kill(pid, 'SIGTERM');
    say(`stopped a gateway left running (nginx ${pid})`);
  } catch {
    // already gone
  }
}

async function waitHealthy(url, deadline, exited) {
  for (;;) {
    if (exited()) throw new Error('pm2-runtime exited while the cluster was starting');
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline)
      throw new Error(`${url} did not answer 200 within ${READY_TIMEOUT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function main() {
  const port = Number(process.env.PORT ?? 8000);
  const host = process.env.HOST || '0.0.0.0';
  const dataDir = path.resolve(process.env.DATA_DIR ?? path.join(ROOT, 'data', 'cluster'));
  const clusterDir = path.join(dataDir, 'cluster');
  fs.mkdirSync(clusterDir, { recursive: true, mode: 0o700 });
  // nginx's workers (another user when started as root) reach their temp files under it.
  fs.chmodSync(dataDir, 0o755);
  fs.chmodSync(clusterDir, 0o755);
  if (!fs.existsSync(path.join(DIST, 'services')))
    throw new Error('no dist/: run `npm run build` (npm run start:cluster does)');
  const nginx = findNginx();

  const database = process.env.DATABASE_URL
    ? {
        databaseUrl: process.env.DATABASE_URL,
        migrationUrl: process.env.MIGRATION_DATABASE_URL,
        stop: async () => {},
      }
    : await startEmbeddedPostgres(path.join(dataDir, 'postgres'));

  const gatewayPidFile = path.join(clusterDir, 'gateway', 'nginx.pid');
  let runtime;
  let stopping = false;
  const stop = async (code) => {
    if (stopping) return;
    stopping = true;
    say('stopping');
    if (runtime && runtime.exitCode === null && runtime.signalCode === null) {
      runtime.kill('SIGINT');
      const forced = setTimeout(() => runtime.kill('SIGKILL'), 30_000);
      await new Promise((resolve) =>
        runtime.exitCode !== null || runtime.signalCode !== null ? resolve() : runtime.once('exit', resolve),
      );
      clearTimeout(forced);
    }
    stopLeftoverGateway(gatewayPidFile);
    await database.stop().catch((error) => say(`stopping PostgreSQL: ${error.message}`));
    say('stopped');
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  try {
    const processes = await planProcesses();
    const gatewayDir = path.join(clusterDir, 'gateway');
    fs.mkdirSync(gatewayDir, { recursive: true });
    fs.chmodSync(gatewayDir, 0o755);
    const statusPort = await freePort();
    const ports = (kind) => processes.filter((p) => p.kind === kind).map((p) => p.port);
    const gatewayConfig = writeClusterConfig({
      dir: gatewayDir,
      host,
      port,
      statusPort,
      commandApiPorts: ports('command-api'),
      queryApiPorts: ports('query-api'),
    });
    const spawnedNginx = spawnSync(
      nginx,
      ['-t', '-p', gatewayDir, '-e', path.join(gatewayDir, 'error.log'), '-c', gatewayConfig],
      {
        encoding: 'utf8',
      },
    );
    if (spawnedNginx.status !== 0) throw new Error(`nginx -t failed:\n${spawnedNginx.stderr}`);

    const ecosystemFile = path.join(clusterDir, 'ecosystem.config.json');
    fs.writeFileSync(
      ecosystemFile,
      JSON.stringify(
        ecosystem(processes, { nginx, dir: gatewayDir, config: gatewayConfig }, clusterDir),
        null,
        2,
      ),
    );
    const gatewayUrl = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
    fs.writeFileSync(
      path.join(clusterDir, 'cluster.json'),
      JSON.stringify({ gateway: gatewayUrl, gatewayStatusPort: statusPort, processes }, null, 2),
    );
    fs.writeFileSync(
      path.join(clusterDir, 'prometheus-targets.json'),
      JSON.stringify(
        processes.map((p) => ({
          targets: [`127.0.0.1:${p.port}`],
          labels: { job: p.kind, replica: p.name },
        })),
        null,
        2,
      ),
    );

    runtime = spawn(process.execPath, [PM2_RUNTIME, 'start', ecosystemFile], {
      cwd: ROOT,
      env: { ...serviceEnvironment(database, dataDir), PM2_HOME: path.join(clusterDir, 'pm2') },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    runtime.once('exit', (code, signal) => {
      if (!stopping) {
        say(`pm2-runtime exited (${signal ?? code}); stopping`);
        void stop(1);
      }
    });
    const exited = () => runtime.exitCode !== null || runtime.signalCode !== null;
    const deadline = Date.now() + READY_TIMEOUT_MS;
    await Promise.all(
      processes.map((p) => waitHealthy(`http://127.0.0.1:${p.port}/health/live/`, deadline, exited)),
    );
    await waitHealthy(`${gatewayUrl}/health/`, deadline, exited);
    say(`${processes.map((p) => p.name).join(', ')} and the gateway are up`);
    say(`gateway: ${gatewayUrl}/  (Ctrl-C stops everything)`);
  } catch (error) {
    say(`could not start: ${error.message}`);
    await stop(1);
  }
}

void main();
