import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { Client as PgClient } from 'pg';
import path from 'node:path';
import { niftiBytes } from '#tests/e2e/brains/brainFixtures';
import { freePort } from '#tests/support/freePort';
import { spawnService } from '#tests/support/spawnService';
import { benchAccount } from './benchAccount';
import { BENCH_STAFF, spawnBenchService } from './benchService';
import type { BenchPostgres } from './benchPostgres';
import type { Cleanup } from './cleanup';
import { type Figure, type Unit, milliseconds, percent, perSecond } from './figure';
import { type LoadResult, checked, generateLoad, stopLoadGenerators, summarise } from './loadGenerator';
import { cpuSecondsOf, statFields } from './benchProcesses';
import { printDetail, printFigure, printLoad, printSection } from './report';

export interface CreateBenchOptions {
  readonly rounds: number;
  readonly connections: number;
  readonly durationSeconds: number;
}

const BOUNDARY = '----catalogue-create-bench';
/** A count per create, to one decimal. */
const count: Unit = { suffix: 'per create', format: (n) => n.toFixed(1) };

/**
 * Issue 22's row "brains created through the API, 8 clients, small NIfTI, processing on": autocannon
 * (its own process) sends multipart POST /api/brains/ with a small NIfTI as fast as the all-in-one
 * (its own process, upload processor on, on the embedded PostgreSQL) answers 201, each round held
 * against the least a create must do with the same bytes, measured in the same round: the bare
 * storing server (tests/bench/bareStoringServer: the body streamed into a file, SHA-256, fsync,
 * 201) under the same load. Every 201 is a brain committed and projected (read-your-writes), with
 * its upload durable; the processor works through the uploads meanwhile, on the same cores.
 */
export async function measureCreates(
  pg: BenchPostgres,
  cleanup: Cleanup,
  options: CreateBenchOptions,
): Promise<Figure[]> {
  printSection(
    `brains created through the API: ${options.connections} clients, small NIfTI, processing on (server in a child process)`,
  );
  const dataDir = path.join(pg.scratchDir, 'create-bench');
  mkdirSync(dataDir, { recursive: true });
  const stopDir = cleanup.defer('create bench data', () => rmSync(dataDir, { recursive: true, force: true }));
  const stopLoad = cleanup.defer('create bench load', stopLoadGenerators);
  // BENCH_CREATE_NODE_OPTIONS: e.g. `--import` of a profiler for the server.
  const databaseUrl = await pg.createDatabase('create_bench');
  const server = await spawnBenchService(
    databaseUrl,
    path.join(dataDir, 'service'),
    process.env.BENCH_CREATE_NODE_OPTIONS,
  );
  const stopServer = cleanup.defer('create bench server', () => server.kill());
  // The database's own counters: transactions committed and WAL flushes, per create (load-independent).
  const stats = new PgClient({ connectionString: databaseUrl });
  await stats.connect();
  const stopStats = cleanup.defer('create bench statistics', () => stats.end());
  const bareDir = path.join(dataDir, 'bare');
  mkdirSync(bareDir, { recursive: true });
  const bare = await spawnService(`tests/bench/bareStoringServer${path.extname(__filename)}`, {
    DATA_DIR: bareDir,
    PORT: String(await freePort()),
  });
  const stopBare = cleanup.defer('bare storing server', () => bare.kill());
  try {
    const staff = await login(server.url, BENCH_STAFF.email, BENCH_STAFF.password);
    const category = await postJson<{ id: number }>(server.url, '/api/categories/', staff, {
      name: 'create-bench',
    });
    const token = await benchAccount(server.url, 'creator');
    const body = createForm(category.id).toString('base64');
    const load = (url: string, durationSeconds: number) =>
      generateLoad({
        url,
        connections: options.connections,
        durationSeconds,
        headers: {
          authorization: `Token ${token}`,
          'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
        },
        post: { bodyBase64: body },
      }).then(checked);
    // Warm-up: code paths compiled, pools and the processor's workers started.
    await load(`${server.url}/api/brains/`, 2);
    await load(`${bare.url}/`, 1);
    const creates: number[] = [];
    const cpuPerCreate: number[] = [];
    const commitsPerCreate: number[] = [];
    const flushesPerCreate: number[] = [];
    const pgCpuPerCreate: number[] = [];
    const bares: number[] = [];
    const ratios: number[] = [];
    for (let round = 0; round < options.rounds; round++) {
      // The two take turns going first: whichever runs second meets the other's writeback.
      let service: LoadResult;
      let bareRun: LoadResult;
      const timedCreates = async () => {
        const cpuBefore = cpuSecondsOf(server.pid);
        const pgBefore = postgresCpuSeconds(pg);
        const countersBefore = await databaseCounters(stats);
        const result = await load(`${server.url}/api/brains/`, options.durationSeconds);
        const cpu = cpuSecondsOf(server.pid) - cpuBefore;
        const pgCpu = postgresCpuSeconds(pg) - pgBefore;
        const countersAfter = await databaseCounters(stats);
        const created = result.requestsPerSecond * options.durationSeconds;
        cpuPerCreate.push((cpu * 1000) / created);
        pgCpuPerCreate.push((pgCpu * 1000) / created);
        commitsPerCreate.push((countersAfter.commits - countersBefore.commits) / created);
        flushesPerCreate.push((countersAfter.walSyncs - countersBefore.walSyncs) / created);
        return result;
      };
      if (round % 2 === 0) {
        service = await timedCreates();
        bareRun = await load(`${bare.url}/`, options.durationSeconds);
      } else {
        bareRun = await load(`${bare.url}/`, options.durationSeconds);
        service = await timedCreates();
      }
      creates.push(service.requestsPerSecond);
      bares.push(bareRun.requestsPerSecond);
      ratios.push(service.requestsPerSecond / bareRun.requestsPerSecond);
      printDetail(
        `round ${round + 1}: creates ${summarise(service)}, CPU per create: server ${cpuPerCreate[round]!.toFixed(1)} ms (processing included), PostgreSQL ${pgCpuPerCreate[round]!.toFixed(1)} ms; per create ${commitsPerCreate[round]!.toFixed(1)} transactions, ${flushesPerCreate[round]!.toFixed(1)} WAL flushes; bare storing server, same bytes ${summarise(bareRun)}`,
      );
    }
    const processed = await countUploads(server.url, token, 'completed');
    const failed = await countUploads(server.url, token, 'failed');
    const total = await countUploads(server.url, token, '');
    printDetail(`uploads processed by the end: ${processed} of ${total} (${failed} failed)`);
    if (failed > 0) throw new Error(`${failed} uploads failed processing`);
    printLoad('after the create rounds');
    const figures: Figure[] = [
      {
        name: `brains created through the API (${options.connections} clients, small NIfTI, processing on)`,
        rounds: creates,
        unit: perSecond('brains'),
        target: { kind: 'at least', value: 200 },
      },
      {
        name: 'creates: CPU per create, server (processing included) + PostgreSQL',
        rounds: cpuPerCreate.map((c, i) => c + pgCpuPerCreate[i]!),
        unit: milliseconds,
        target: undefined,
      },
      {
        name: 'creates: transactions committed per create (processing and projection included)',
        rounds: commitsPerCreate,
        unit: count,
        target: undefined,
      },
      {
        name: 'creates: WAL flushes per create (the whole cluster)',
        rounds: flushesPerCreate,
        unit: count,
        target: undefined,
      },
      {
        name: 'creates: bare storing server, same multipart bytes',
        rounds: bares,
        unit: perSecond('req'),
        target: undefined,
      },
      {
        name: 'creates / bare storing server, same run',
        rounds: ratios,
        unit: percent,
        target: undefined,
      },
    ];
    figures.forEach(printFigure);
    return figures;
  } finally {
    if (process.env.BENCH_CREATE_NODE_OPTIONS) {
      process.kill(server.pid, 'SIGTERM'); // a clean exit, for whatever the options write then
      await new Promise((resolve) => setTimeout(resolve, 5000));
    }
    await stopStats();
    await stopLoad();
    await stopBare();
    await stopServer();
    await stopDir();
  }
}

/** The multipart form of one create: a name, the category, and a small NIfTI as `file`. */
function createForm(categoryId: number): Buffer {
  const field = (name: string, value: string) =>
    `--${BOUNDARY}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  return Buffer.concat([
    Buffer.from(field('name', 'bench brain') + field('category', String(categoryId))),
    Buffer.from(
      `--${BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="scan.nii"\r\ncontent-type: application/octet-stream\r\n\r\n`,
    ),
    niftiBytes(),
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

async function postJson<T>(baseUrl: string, apiPath: string, token: string | undefined, body: unknown) {
  const response = await fetch(baseUrl + apiPath, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Token ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`POST ${apiPath}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

async function login(baseUrl: string, email: string, password: string): Promise<string> {
  return (await postJson<{ token: string }>(baseUrl, '/api/auth/login/', undefined, { email, password }))
    .token;
}

/**
 * CPU seconds of the bench's PostgreSQL so far: the postmaster, its ended children (reaped into its
 * cutime/cstime) and its running ones (backends, WAL writer, checkpointer, autovacuum).
 */
function postgresCpuSeconds(pg: BenchPostgres): number {
  const postmaster = pg.postmasterPid();
  if (postmaster === undefined) return Number.NaN;
  const own = statFields(postmaster);
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const fields = statFields(Number(entry));
      if (Number(fields[1]) === postmaster) ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // ended meanwhile
    }
  }
  return ticks / 100;
}

async function countUploads(baseUrl: string, token: string, status: string): Promise<number> {
  const query = status ? `status=${status}&page_size=1` : 'page_size=1';
  const response = await fetch(`${baseUrl}/api/file-uploads/?${query}`, {
    headers: { authorization: `Token ${token}` },
  });
  if (!response.ok) throw new Error(`GET /api/file-uploads/: ${response.status}`);
  return ((await response.json()) as { count: number }).count;
}

/**
 * Transactions committed in the bench's database (read-only ones included: every statement outside
 * a transaction is one) and WAL flushes of the cluster so far. Statistics are flushed at most once a
 * second and at a backend's transaction end: forced here for this backend, and read after a pause
 * long enough for the others'.
 */
async function databaseCounters(db: PgClient): Promise<{ commits: number; walSyncs: number }> {
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await db.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await db.query<{ commits: string; wal_syncs: string }>(
    `SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()) AS commits,
            (SELECT wal_sync FROM pg_stat_wal) AS wal_syncs`,
  );
  return { commits: Number(rows[0]!.commits), walSyncs: Number(rows[0]!.wal_syncs) };
}
