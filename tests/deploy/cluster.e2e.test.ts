import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { brainForm, createTaxonomy, nifti, niftiBytes } from '#tests/e2e/brains/brainFixtures';
import { uploadForm } from '#tests/e2e/uploads/uploadFixtures';
import { brokenPromises } from '#tests/support/acknowledgedWrites';
import { freePort } from '#tests/support/freePort';
import { type Client, client, newUser } from '#tests/support/httpClient';
import { type PrivatePostgres, startPrivatePostgres } from '#tests/support/privatePostgres';
import { waitUntilCaughtUp } from '#tests/support/readModelAudit';
import { scratchDir } from '#tests/support/scratchDir';
import { waitFor } from '#tests/support/waitFor';
import { type WriteLoad, startWriteLoad } from '#tests/support/writeLoad';
import {
  type ClusterProcess,
  type RunningCluster,
  type RunningPrometheus,
  REPO_ROOT,
  pidOfPort,
  startCluster,
  startPrometheus,
} from './clusterTools';

/**
 * The topology, started as an operator starts it (`npm run start:cluster`): command-api x2,
 * query-api x2, projector x2, processor x2, relay, Debian's nginx as the gateway, all under
 * pm2-runtime, on a PostgreSQL this test can stop; Debian's Prometheus scraping every process each
 * second. Everything goes through the gateway, as a client's requests would.
 */
jest.setTimeout(120_000);

const ADMIN = { email: 'ops@example.org', password: 'operations-password' };
const TOKEN_LIMIT = 12;
const WRITERS = 4;
const FIGURES = path.join(tmpdir(), 'brain-catalogue-cluster-figures.json');

let pg: PrivatePostgres;
let databaseUrl: string;
let cluster: RunningCluster | undefined;
let prometheus: RunningPrometheus | undefined;
let gateway: Client;
let staff: string;
let load: WriteLoad | undefined;
const figures: Record<string, unknown> = {};
const killedJobs = new Set<string>();

beforeAll(async () => {
  pg = await startPrivatePostgres();
  const admin = new PgClient({ connectionString: pg.url });
  await admin.connect();
  await admin.query('CREATE DATABASE catalogue');
  await admin.end();
  const url = new URL(pg.url);
  url.pathname = '/catalogue';
  databaseUrl = url.toString();
  const dataDir = scratchDir('cluster-');
  cluster = await startCluster(
    {
      PORT: String(await freePort()),
      DATABASE_URL: databaseUrl,
      // No broker here: the relay runs (it is part of the topology) and retries meanwhile.
      KAFKA_BROKERS: `127.0.0.1:${await freePort()}`,
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      PASSWORD_HASH_LOG_N: '10',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_LOGIN: '100000/minute',
      RATE_LIMIT_REGISTER: '100000/hour',
      RATE_LIMIT_UPLOAD: '100000/hour',
      RATE_LIMIT_DEFAULT: '1000000/minute',
      RATE_LIMIT_TOKEN_CREATE: `${TOKEN_LIMIT}/hour`,
      PROCESSOR_INSPECTOR_MODULE: path.join(REPO_ROOT, 'tests/deploy/slowFilesInspector.cjs'),
      PROCESSOR_CONCURRENCY: '1',
    },
    dataDir,
    240_000,
  );
  prometheus = await startPrometheus(
    scratchDir('prometheus-'),
    path.join(dataDir, 'cluster', 'prometheus-targets.json'),
    await freePort(),
  );
  gateway = client(cluster.info.gateway);
  const login = await gateway.post('/api/auth/login/', { json: ADMIN });
  if (login.status !== 200) throw new Error(`staff login: ${login.status} ${login.text}`);
  staff = login.body.token;
}, 330_000);

afterAll(async () => {
  await load?.stop();
  await prometheus?.stop();
  await cluster?.stop();
  await pg?.close();
  writeFileSync(FIGURES, `${JSON.stringify(figures, null, 2)}\n`);
  process.stdout.write(`cluster figures (${FIGURES}): ${JSON.stringify(figures)}\n`);
}, 90_000);

const processes = (kind: string): ClusterProcess[] => cluster!.info.processes.filter((p) => p.kind === kind);

async function metricsOf(process: ClusterProcess): Promise<string> {
  return (await fetch(`http://127.0.0.1:${process.port}/metrics/`)).text();
}

async function healthy(process: ClusterProcess): Promise<boolean> {
  return fetch(`http://127.0.0.1:${process.port}/health/live/`).then(
    (r) => r.ok,
    () => false,
  );
}

async function withDatabase<T>(use: (db: PgClient) => Promise<T>): Promise<T> {
  const db = new PgClient({ connectionString: databaseUrl });
  await db.connect();
  try {
    return await use(db);
  } finally {
    await db.end();
  }
}

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

test('the topology: 2 command-apis, 2 query-apis, 2 projectors, 2 processors, a relay, behind nginx', async () => {
  const kinds = cluster!.info.processes.map((p) => p.kind);
  expect(kinds.sort()).toEqual(
    [
      'command-api',
      'command-api',
      'processor',
      'processor',
      'projector',
      'projector',
      'query-api',
      'query-api',
      'relay',
    ].sort(),
  );
  const health = await gateway.get('/health/');
  expect(health.status).toBe(200);
  // Prometheus scrapes every one of them.
  await waitFor(
    'Prometheus to scrape all nine processes',
    async () => (await prometheus!.query('up == 1')).length,
    {
      timeoutMs: 20_000,
      until: (n) => n === 9,
    },
  );
});

test('shared rate limits: one token-creation budget across both command-apis', async () => {
  const user = await newUser(gateway);
  const statuses: number[] = [];
  for (let i = 0; i < TOKEN_LIMIT + 4; i += 1) {
    statuses.push(
      (await gateway.post('/api/tokens/', { token: user.token, json: { name: `t${i}` } })).status,
    );
    await new Promise((resolve) => setTimeout(resolve, 400)); // the counters are shared every 250 ms
  }
  // The processes share their counts through PostgreSQL every 250 ms: at most one over the limit in
  // that window (two unshared budgets would have let all 16 through).
  const created = statuses.filter((s) => s === 201).length;
  expect(created).toBeGreaterThanOrEqual(TOKEN_LIMIT);
  expect(created).toBeLessThanOrEqual(TOKEN_LIMIT + 1);
  expect(statuses.slice(TOKEN_LIMIT + 1)).toEqual([429, 429, 429]);
  figures.tokenCreatesAccepted = { limit: TOKEN_LIMIT, accepted: created };
  // Both command-apis answered some of them: the budget really is shared, not per process.
  for (const api of processes('command-api'))
    expect(await metricsOf(api)).toMatch(
      /http_requests_total\{[^}]*route="\/api\/tokens\/"[^}]*status="201"/,
    );
});

test('brains created per second through the gateway (4 writers, 10 s)', async () => {
  const { atlas } = await createTaxonomy(gateway, staff);
  const writers = await Promise.all(Array.from({ length: WRITERS }, () => newUser(gateway)));
  const latencies: number[] = [];
  const failures: string[] = [];
  const until = Date.now() + 10_000;
  const started = Date.now();
  await Promise.all(
    writers.map(async (writer, w) => {
      for (let i = 0; Date.now() < until; i += 1) {
        const t0 = performance.now();
        const res = await gateway.post('/api/brains/', {
          token: writer.token,
          body: brainForm({ name: `Bench ${w}-${i}`, atlas: atlas.id }, nifti()),
        });
        latencies.push(performance.now() - t0);
        if (res.status !== 201) failures.push(`${res.status} ${res.text}`);
      }
    }),
  );
  const seconds = (Date.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  figures.brainsCreated = {
    writers: WRITERS,
    perSecond: Number((latencies.length / seconds).toFixed(1)),
    p50Ms: Math.round(percentile(latencies, 0.5)),
    p99Ms: Math.round(percentile(latencies, 0.99)),
    count: latencies.length,
  };
  expect(failures).toEqual([]);
  expect(latencies.length).toBeGreaterThan(10);
});

test('read-your-writes across instances under 4 writers: 0 stale reads in 200 cycles', async () => {
  const { species } = await createTaxonomy(gateway, staff);
  load = startWriteLoad(cluster!.info.gateway, WRITERS, {
    atlasSpeciesId: species.id,
    // 429: a load user past its token budget (RATE_LIMIT_TOKEN_CREATE is low for the test above).
    retryLaterStatuses: new Set([429, 502, 503]),
  });
  const user = await newUser(gateway);
  const stale: string[] = [];
  for (let cycle = 0; cycle < 200; cycle += 1) {
    const bio = `cycle ${cycle}`;
    const patched = await gateway.patch('/api/profile/', { token: user.token, json: { bio } });
    expect(patched.status).toBe(200);
    const read = await gateway.get('/api/profile/', { token: user.token });
    if (read.body.bio !== bio) stale.push(`cycle ${cycle}: read ${JSON.stringify(read.body.bio)}`);
  }
  expect(stale).toEqual([]);
  expect(load.ledger.acknowledged).toBeGreaterThan(50);
});

async function killAndAwaitRestart(target: ClusterProcess, pid = pidOfPort(target.port)): Promise<number> {
  const killedAt = Date.now();
  process.kill(pid, 'SIGKILL');
  killedJobs.add(target.kind);
  await waitFor('the process to be gone', () => !healthyPid(pid), { timeoutMs: 5000 });
  await waitFor(`PM2 to restart ${target.name}`, () => healthy(target), {
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  return killedAt;
}

function healthyPid(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('SIGKILL of a command-api, then a query-api, under load: PM2 restarts each, the gateway only fails requests in flight', async () => {
  const before = load!.ledger.statuses.get(502) ?? 0;
  const commandKilledAt = await killAndAwaitRestart(processes('command-api')[0]!);
  const commandDownSeconds = (Date.now() - commandKilledAt) / 1000;
  const afterCommand = load!.ledger.statuses.get(502) ?? 0;
  await killAndAwaitRestart(processes('query-api')[1]!);
  const afterQuery = load!.ledger.statuses.get(502) ?? 0;
  // At most the requests the writers had in flight at each kill. A command-api also answers a PUT
  // or DELETE it never received with a 502 (the gateway never replays those): while the replica is
  // down, nginx tries it again once per fail_timeout (2 s), and if that request is a PUT or DELETE
  // it gets the 502 instead of going to the other replica.
  expect(afterCommand - before).toBeLessThanOrEqual(WRITERS + Math.ceil(commandDownSeconds / 2) + 1);
  expect(afterQuery - afterCommand).toBeLessThanOrEqual(WRITERS);
  figures.gateway502AtKills = { commandApi: afterCommand - before, queryApi: afterQuery - afterCommand };
});

test('SIGKILL of the leading projector: the standby takes over within 5 s', async () => {
  const projectors = processes('projector');
  const leads = async (p: ClusterProcess) =>
    /^projection_position\{/m.test(await metricsOf(p).catch(() => ''));
  const found = await waitFor('a leading projector', async () => {
    for (const p of projectors) if (await leads(p)) return p;
    return undefined;
  });
  const leader = found!;
  const standby = projectors.find((p) => p !== leader)!;
  const killedAt = Date.now();
  process.kill(pidOfPort(leader.port), 'SIGKILL');
  killedJobs.add('projector');
  // Taken over: a write made after the kill is readable (the standby applied it).
  const user = await newUser(gateway);
  await waitFor('the standby to lead', () => leads(standby), { timeoutMs: 10_000, intervalMs: 50 });
  const takeover = (Date.now() - killedAt) / 1000;
  const me = await gateway.get('/api/auth/me/', { token: user.token });
  expect(me.status).toBe(200);
  figures.projectorTakeoverSeconds = takeover;
  expect(takeover).toBeLessThanOrEqual(5);
  await waitFor('PM2 to restart the killed projector', () => healthy(leader), { timeoutMs: 60_000 });
});

test('SIGKILL of the processor holding an upload: the other takes it over within 20 s, and it is processed once', async () => {
  const user = await newUser(gateway);
  const uploaded = await gateway.post('/api/file-uploads/', {
    token: user.token,
    body: uploadForm('slow-6000-scan.nii', niftiBytes()),
  });
  expect(uploaded.status).toBe(201);
  const stream = `upload-${uploaded.body.id}`;
  const starts = (): Promise<{ processorId: string; at: Date }[]> =>
    withDatabase(async (db) =>
      (
        await db.query<{ processor: string; at: Date }>(
          `SELECT data->>'processorId' AS processor, recorded_at AS at FROM event_store.events
            WHERE stream_name = $1 AND event_type = 'UploadProcessingStarted' ORDER BY global_position`,
          [stream],
        )
      ).rows.map((r) => ({ processorId: r.processor, at: r.at })),
    );
  const [first] = await waitFor('a processor to claim the upload', starts, {
    timeoutMs: 30_000,
    intervalMs: 50,
    until: (s) => s.length === 1,
  });
  const pid = Number(first!.processorId.split(':')[1]);
  const killedAt = Date.now();
  process.kill(pid, 'SIGKILL');
  killedJobs.add('processor');
  const claims = await waitFor('another processor to take the claim over', starts, {
    timeoutMs: 40_000,
    intervalMs: 100,
    until: (s) => s.length === 2,
  });
  const takeover = (claims[1]!.at.getTime() - killedAt) / 1000;
  figures.processorTakeoverSeconds = takeover;
  expect(claims[1]!.processorId).not.toBe(first!.processorId);
  expect(takeover).toBeLessThanOrEqual(20);
  const upload = await waitFor(
    'the upload to be processed',
    async () => (await gateway.get(`/api/file-uploads/${uploaded.body.id}/`, { token: user.token })).body,
    { timeoutMs: 30_000, intervalMs: 250, until: (u) => u.status === 'completed' || u.status === 'failed' },
  );
  expect(upload.status).toBe('completed');
});

test('SIGKILL of the relay: PM2 restarts it', async () => {
  await killAndAwaitRestart(processes('relay')[0]!);
});

test('after the kills: no acknowledged write lost, no 500, every upload processed exactly once', async () => {
  await load!.stop();
  const ledger = load!.ledger;
  figures.load = {
    acknowledged: ledger.acknowledged,
    unreachable: ledger.unreachable,
    statuses: Object.fromEntries(ledger.statuses),
  };
  expect(ledger.unexpected).toEqual([]);
  expect(ledger.statuses.get(500) ?? 0).toBe(0);
  await withDatabase(async (db) => {
    await waitUntilCaughtUp(db, 60_000);
    expect(await brokenPromises(db, ledger)).toEqual([]);
    const unfinished = await waitFor(
      'every upload to be processed',
      async () =>
        (
          await db.query<{ stream: string; outcomes: number; deleted: boolean }>(
            `SELECT stream_name AS stream,
                    count(*) FILTER (WHERE event_type IN ('UploadProcessingCompleted', 'UploadProcessingFailed'))::int AS outcomes,
                    bool_or(event_type = 'UploadDeleted') AS deleted
               FROM event_store.events WHERE stream_name LIKE 'upload-%' GROUP BY stream_name`,
          )
        ).rows,
      {
        timeoutMs: 60_000,
        intervalMs: 500,
        until: (rows) => rows.every((r) => r.outcomes === 1 || r.deleted),
      },
    );
    expect(unfinished.filter((r) => r.outcomes > 1)).toEqual([]);
    expect(unfinished.length).toBeGreaterThan(5);
  });
});

test('a 10 s PostgreSQL outage: reads and writes answer 503 with Retry-After, nothing else, then recover', async () => {
  const user = await newUser(gateway);
  const seen = new Map<string, number>();
  let probing = true;
  const probe = (async () => {
    for (let i = 0; probing; i += 1) {
      const res =
        i % 2 === 0
          ? await gateway.get('/api/profile/', { token: user.token })
          : await gateway.patch('/api/profile/', { token: user.token, json: { bio: `outage ${i}` } });
      const key =
        res.status === 503
          ? `503 retry-after=${res.headers.get('retry-after') !== null}`
          : String(res.status);
      seen.set(key, (seen.get(key) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  await new Promise((resolve) => setTimeout(resolve, 500));
  await pg.stop();
  const loopAlert = waitFor(
    'CatalogueLoopRetrying to fire during the outage',
    async () =>
      (
        await prometheus!.query(
          'ALERTS{alertname="CatalogueLoopRetrying", alertstate="firing", job!="relay"}',
        )
      ).length,
    { timeoutMs: 10_000, intervalMs: 250, until: (n) => n > 0 },
  );
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  const loopAlertFired = await loopAlert.then(
    () => true,
    () => false,
  );
  await pg.start();
  await waitFor(
    'writes to work again',
    async () => (await gateway.patch('/api/profile/', { token: user.token, json: { bio: 'after' } })).status,
    { timeoutMs: 60_000, intervalMs: 250, until: (s) => s === 200 },
  );
  probing = false;
  await probe;
  figures.outageStatuses = Object.fromEntries(seen);
  expect(seen.get('503 retry-after=true') ?? 0).toBeGreaterThan(0);
  expect([...seen.keys()].filter((key) => key !== '200' && key !== '503 retry-after=true')).toEqual([]);
  expect(loopAlertFired).toBe(true);
});

test('Prometheus: the target-down alert fired for every kind killed; every dashboard panel query returns data', async () => {
  const fired = await prometheus!.query(
    'max by (job) (max_over_time(ALERTS{alertname="CatalogueTargetDown", alertstate="firing"}[15m]))',
  );
  expect(fired.map((series) => series.metric.job).sort()).toEqual(
    expect.arrayContaining([...killedJobs].sort()),
  );
  const dashboard = JSON.parse(
    readFileSync(path.join(REPO_ROOT, 'deploy/grafana/dashboards/catalogue.json'), 'utf8'),
  ) as { panels: { title: string; targets?: { expr: string }[] }[] };
  const empty: string[] = [];
  for (const panel of dashboard.panels)
    for (const target of panel.targets ?? []) {
      const expr = target.expr
        .replaceAll('$service', '.*')
        .replaceAll('$route', '.*')
        .replaceAll('$__rate_interval', '5m')
        .replaceAll('$__range', '15m');
      if ((await prometheus!.query(expr)).length === 0) empty.push(`${panel.title}: ${target.expr}`);
    }
  expect(empty).toEqual([]);
});

test('SIGTERM (as Ctrl-C) stops every process the cluster started', async () => {
  const dataDir = cluster!.dataDir;
  await cluster!.stop();
  const left = processesMentioning(dataDir);
  expect(left).toEqual([]);
  expect(
    await fetch(`${cluster!.info.gateway}/health/`).then(
      () => 'answered',
      () => 'refused',
    ),
  ).toBe('refused');
});

/** Processes whose command line or environment names `dir` (the services' DATA_DIR, nginx's prefix). */
function processesMentioning(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8');
      if (cmdline.includes(dir) || environ.includes(`DATA_DIR=${dir}`))
        found.push(`${entry}: ${cmdline.replaceAll('\0', ' ')}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
