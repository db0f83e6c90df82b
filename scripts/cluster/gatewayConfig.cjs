'use strict';
/**
 * Renders deploy/gateway/nginx.conf.template, the gateway's one template, for the two ways the
 * separate services run: `compose` (Docker DNS names, re-resolved at request time) and `cluster`
 * (`npm run start:cluster`: loopback ports of every replica, persistent upstream connections).
 *
 *   node scripts/cluster/gatewayConfig.cjs compose > deploy/gateway/nginx.conf   (npm run render:gateway)
 */
const fs = require('node:fs');
const path = require('node:path');

const TEMPLATE = path.resolve(__dirname, '../../deploy/gateway/nginx.conf.template');
const COMPOSE_OUTPUT = path.resolve(__dirname, '../../deploy/gateway/nginx.conf');

function render(values) {
  const text = fs.readFileSync(TEMPLATE, 'utf8');
  const rendered = text.replace(/\{\{([A-Z_]+)\}\}/g, (_, name) => {
    if (!(name in values)) throw new Error(`gateway template: no value for {{${name}}}`);
    return values[name];
  });
  return (
    '# GENERATED from deploy/gateway/nginx.conf.template by scripts/cluster/gatewayConfig.cjs: edit the\n' +
    '# template, then `npm run render:gateway`.\n' +
    rendered
  );
}

/** deploy/compose.yaml's gateway (nginx image; mounted as /etc/nginx/nginx.conf). */
function renderCompose() {
  return render({
    WORKER_PROCESSES: 'auto',
    PID_FILE: '/tmp/nginx.pid',
    ERROR_LOG: '/dev/stderr',
    ACCESS_LOG: '/dev/stdout',
    TEMP_DIR: '/tmp',
    RESOLVER: [
      "    # Docker's embedded DNS. The APIs are proxied to by name through a variable, so nginx resolves",
      '    # the name at request time (every 10 s at most) and balances over all the addresses it returns:',
      '    # replicas added (docker compose up --scale ...), removed or restarted are picked up, and the',
      '    # config needs neither the names at start-up nor the `resolve` parameter (nginx >= 1.27.3).',
      '    resolver 127.0.0.11 valid=10s ipv6=off;',
      '    resolver_timeout 5s;',
    ].join('\n'),
    UPSTREAMS: '    # (no upstream blocks: the service names are resolved through the resolver above)',
    COMMAND_API: 'command-api:8000',
    QUERY_API: 'query-api:8000',
    LISTEN: '8000',
    STATUS_LISTEN: '8081',
  });
}

function upstream(name, ports) {
  return [
    `    upstream ${name} {`,
    ...ports.map((port) => `        server 127.0.0.1:${port} max_fails=1 fail_timeout=2s;`),
    '        keepalive 64;',
    '        keepalive_timeout 4s;',
    '        keepalive_requests 10000;',
    '    }',
  ].join('\n');
}

/**
 * `npm run start:cluster`: the replicas listen on loopback ports; keepalive_timeout stays below
 * Node's keepAliveTimeout (5 s) so nginx never reuses a connection an API is closing.
 * options: { dir, port, statusPort, commandApiPorts, queryApiPorts, host }
 */
function renderCluster(options) {
  return render({
    WORKER_PROCESSES: String(options.workerProcesses ?? 2),
    PID_FILE: path.join(options.dir, 'nginx.pid'),
    ERROR_LOG: path.join(options.dir, 'error.log'),
    ACCESS_LOG: path.join(options.dir, 'access.log'),
    TEMP_DIR: path.join(options.dir, 'temp'),
    RESOLVER: '    # (no resolver: every replica is a fixed loopback port)',
    UPSTREAMS: [
      '    # ---- upstreams: every replica, persistent connections ----',
      upstream('command_api', options.commandApiPorts),
      '',
      upstream('query_api', options.queryApiPorts),
    ].join('\n'),
    COMMAND_API: 'command_api',
    QUERY_API: 'query_api',
    LISTEN: `${options.host ?? '0.0.0.0'}:${options.port}`,
    STATUS_LISTEN: `127.0.0.1:${options.statusPort}`,
  });
}

/** Writes a cluster rendering into `options.dir` (with its temp directories); returns the file. */
function writeClusterConfig(options) {
  for (const sub of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'])
    fs.mkdirSync(path.join(options.dir, 'temp', sub), { recursive: true });
  const file = path.join(options.dir, 'nginx.conf');
  fs.writeFileSync(file, renderCluster(options));
  return file;
}

module.exports = { TEMPLATE, COMPOSE_OUTPUT, renderCompose, renderCluster, writeClusterConfig };

if (require.main === module) {
  if (process.argv[2] !== 'compose') {
    process.stderr.write('usage: gatewayConfig.cjs compose   (writes deploy/gateway/nginx.conf)\n');
    process.exit(2);
  }
  fs.writeFileSync(COMPOSE_OUTPUT, renderCompose());
}
