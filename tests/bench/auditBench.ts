import { execFile } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';
import { createPostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import { formatPosition, type EventStore, type NewEvent } from '#shared/eventStore/eventStore';
import { ProjectionRunner } from '#shared/projections/projectionRunner';
import { createPasswordHasher } from '#shared/auth/passwords';
import { reservationStreamName } from '#shared/domain/reservation/reservation';
import { allProjections } from '#services/projector/projections/allProjections';
import { auditLogProjection } from '#services/projector/projections/auditLogProjection';
import { ledgerProjection } from '#services/projector/projections/ledgerProjection';
import { verifyLedger } from '#services/projector/verifyLedger';
import type { BenchPostgres } from './benchPostgres';
import { spawnBenchService } from './benchService';
import { writeCatalogue } from './catalogueWriter';
import type { Cleanup } from './cleanup';
import { milliseconds, perSecond, type Figure } from './figure';
import { spread } from './stats';
import { stopGracefully, waitUntilIdle } from './benchProcesses';
import { type LoadRequest, checked, generateLoad, summarise } from './loadGenerator';
import { printDetail, printFigure, printSection } from './report';

const execFileAsync = promisify(execFile);
const BATCH = 2000;
/** Events of a generated catalogue per brain (IdAllocated, UploadReceived, BrainCreated). */
const EVENTS_PER_BRAIN = 3;
const REVISIONS = 200;
const VERIFY_ROUNDS = 3;
const STAFF_PASSWORD = 'bench-staff-password';
const LATENCY_TARGETS_MS: Readonly<Record<string, number>> = {
  'event log p99, type filter + time range': 50,
  [`as_of p99, brain with ${REVISIONS} revisions`]: 20,
};

export interface AuditPlan {
  readonly events: number;
  readonly rounds: number;
  readonly connections: number;
  readonly durationSeconds: number;
}

/**
 * The auditor's instruments at scale (issue 18): a store of `events` events (a generated catalogue
 * and one brain with REVISIONS revisions), then
 * - ledger catch-up: the ledger projection (the hash chain) alone, from zero (events/s), and the
 *   audit log's (the event log's rows) beside it, as information;
 * - verify-ledger: the chain recomputed from the events and compared (events/s);
 * - the event log with a type filter and a time range, uncached, varied windows (p99);
 * - `as_of` on the brain with REVISIONS revisions, at random revisions (p99);
 * - the NDJSON export of every event (events/s, the median of rounds).
 */
export async function measureAudit(
  bench: BenchPostgres,
  cleanup: Cleanup,
  plan: AuditPlan,
): Promise<Figure[]> {
  printSection(`audit over ${plan.events.toLocaleString('en-US')} events`);
  const databaseUrl = await bench.createDatabase('bench_audit');
  const store = createPostgresEventStore({ connectionString: databaseUrl, poolSize: 10 });
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  pool.on('error', () => undefined);
  const closeStore = cleanup.defer('audit store', async () => {
    await pool.end();
    await store.close();
  });
  await store.migrate();
  const brains = Math.max(1, Math.floor(plan.events / EVENTS_PER_BRAIN));
  const written = await writeCatalogue(store, brains, () => undefined);
  const revisionPositions = await reviseBrain(store, 1, REVISIONS);
  await makeStaff(store, 1);
  printDetail(`wrote ${written.events + REVISIONS + 2} events in ${written.seconds.toFixed(1)} s`);

  const figures: Figure[] = [];
  const ledger = new ProjectionRunner({ store, pool, projections: [ledgerProjection], batchSize: BATCH });
  let started = performance.now();
  const chained = await ledger.catchUp();
  figures.push(
    figure(
      'ledger catch-up (ledger projection alone, from zero)',
      [chained / seconds(started)],
      perSecond('events'),
      {
        kind: 'at least',
        value: 50_000,
      },
    ),
  );
  started = performance.now();
  const logged = await new ProjectionRunner({
    store,
    pool,
    projections: [auditLogProjection],
    batchSize: BATCH,
  }).catchUp();
  printDetail(
    `the audit log (the event log's rows and indexes) alone, from zero: ${Math.round(logged / seconds(started)).toLocaleString('en-US')} events/s`,
  );
  // `npm run verify-ledger` itself, in a process of its own as an operator runs it (three rounds: the
  // median is the figure, the verification's own time; its wall time with the process's start-up
  // beside it): the links checked straight from the tables, in one worker thread per two cores, at
  // least two. Beside it, once each in this process, the calling thread alone and the walk alone
  // (every event through store.readAll) as the baseline of the same run.
  const verifyRates: number[] = [];
  const wallRates: number[] = [];
  for (let round = 0; round < VERIFY_ROUNDS; round++) {
    const run = await runVerifyLedger(databaseUrl);
    verifyRates.push(run.eventsChecked / run.seconds);
    wallRates.push(run.eventsChecked / run.wallSeconds);
  }
  const verifyRate = spread(verifyRates).median;
  figures.push(
    figure('verify-ledger', verifyRates, perSecond('events'), {
      kind: 'at least',
      value: 100_000,
    }),
  );
  printDetail(
    `verify-ledger from the command's start to its exit (node's start-up, connecting, recording the run): ${wallRates.map((r) => Math.round(r).toLocaleString('en-US')).join(', ')} events/s`,
  );
  started = performance.now();
  const oneThread = await verifyLedger({
    store,
    pool,
    direct: { connectionString: databaseUrl, workers: 1, minEvents: 0 },
  });
  printDetail(
    `verify-ledger in the calling thread alone: ${Math.round(oneThread.eventsChecked / seconds(started)).toLocaleString('en-US')} events/s`,
  );
  started = performance.now();
  const walked = await verifyLedger({ store, pool });
  const walkRate = walked.eventsChecked / seconds(started);
  printDetail(
    `verify-ledger walking store.readAll alone (baseline): ${Math.round(walkRate).toLocaleString('en-US')} events/s; direct / walk ${(verifyRate / walkRate).toFixed(2)}×`,
  );
  started = performance.now();
  const rest = await new ProjectionRunner({
    store,
    pool,
    projections: allProjections,
    batchSize: BATCH,
  }).catchUp();
  printDetail(`the other read models caught up on ${rest} events in ${seconds(started).toFixed(1)} s`);
  const span = await recordedSpan(pool);
  // Every table vacuumed and analysed now: autovacuum would otherwise visit the million new rows of
  // the events and read-model tables while the first rounds are measured (their p99s fell round
  // after round in a run without it).
  started = performance.now();
  await pool.query('VACUUM (ANALYZE)');
  printDetail(`VACUUM (ANALYZE) of the database in ${seconds(started).toFixed(1)} s`);
  await closeStore();

  // The service in a process of its own, as it runs in production, rather than in this one, whose
  // heap holds what writing and checking a million events left. No processor: the generated
  // uploads' bytes were never stored. BENCH_AUDIT_NODE_OPTIONS: e.g. `--import` of a profiler.
  const service = await spawnBenchService(
    databaseUrl,
    path.join(bench.scratchDir, 'audit'),
    process.env.BENCH_AUDIT_NODE_OPTIONS || undefined,
    { env: { PROCESSOR_ENABLED: 'false' }, admin: false },
  );
  const closeService = cleanup.defer('audit all-in-one', async () => {
    await stopGracefully(service.pid); // a clean exit, for whatever the options write then
    await service.kill();
  });
  // Measured once its start-up work (the search index's load) is done.
  await waitUntilIdle(service.pid);
  const token = await login(service.url, 'bench1@example.org', STAFF_PASSWORD);
  const headers = { authorization: `Token ${token}` };
  const load = {
    url: service.url,
    connections: plan.connections,
    durationSeconds: plan.durationSeconds,
    headers,
  };

  // Latency targets are held at half the measured rate, a load the service carries (as the brains
  // list's are): at full rate a p99 is mostly the queue of the connections on two cores.
  figures.push(
    await latencyAtHalfRate('event log p99, type filter + time range', load, plan.rounds, () =>
      eventLogPaths(span, 300),
    ),
  );
  figures.push(
    await latencyAtHalfRate(`as_of p99, brain with ${REVISIONS} revisions`, load, plan.rounds, () =>
      revisionPositions.map((p) => `/api/brains/1/?as_of=${encodeURIComponent(p)}`),
    ),
  );

  // As the other figures, the median of rounds: the first runs cold (neither the events' pages nor
  // the service's export code warm yet: 51,000 events/s against 64,000-66,000 in the next two, in
  // a run at 200,000 events).
  const exportRates: number[] = [];
  for (let round = 0; round < plan.rounds; round++) {
    started = performance.now();
    const lines = await exportAll(service.url, headers);
    exportRates.push(lines / seconds(started));
    printDetail(`export round ${round + 1}: ${lines} events`);
  }
  figures.push(
    figure('NDJSON export of every event', exportRates, perSecond('events'), {
      kind: 'at least',
      value: 50_000,
    }),
  );
  await closeService();
  return figures;
}

/** p99 per round at half the rate the first full-rate run measured (target: at most `TARGETS[name]`). */
async function latencyAtHalfRate(
  name: string,
  load: Omit<LoadRequest, 'paths'>,
  rounds: number,
  paths: () => string[],
): Promise<Figure> {
  const full = checked(await generateLoad({ ...load, paths: paths() }));
  printDetail(`${name.replace(/ p99.*/, '')}, full rate: ${summarise(full)}`);
  const overallRate = Math.max(1, Math.round(full.requestsPerSecond / 2));
  const p99s: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const result = checked(await generateLoad({ ...load, paths: paths(), overallRate }));
    printDetail(`${name.replace(/ p99.*/, '')} at ${overallRate} req/s: ${summarise(result)}`);
    p99s.push(result.latencyP99Ms);
  }
  return figure(`${name} at half rate (${overallRate} req/s)`, p99s, milliseconds, {
    kind: 'at most',
    value: LATENCY_TARGETS_MS[name]!,
  });
}

const seconds = (since: number): number => (performance.now() - since) / 1000;

/**
 * `npm run verify-ledger -- --json` as built (the compiled script, or the source through tsx when
 * the bench runs from source) on the database; its events checked, its own seconds and its wall time.
 */
async function runVerifyLedger(
  databaseUrl: string,
): Promise<{ eventsChecked: number; seconds: number; wallSeconds: number }> {
  const extension = path.extname(__filename);
  const script = path.join(__dirname, '..', '..', 'services', 'projector', `verifyLedger${extension}`);
  const loader = extension === '.ts' ? ['--import', 'tsx'] : [];
  const started = performance.now();
  const { stdout } = await execFileAsync(process.execPath, [...loader, script, '--json'], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
    maxBuffer: 1024 * 1024,
  });
  const wallSeconds = seconds(started);
  const result = JSON.parse(stdout) as {
    ok: boolean;
    events_checked: number;
    seconds: number;
    message: string;
  };
  if (!result.ok) throw new Error(`verify-ledger failed on an untouched store: ${result.message}`);
  return { eventsChecked: result.events_checked, seconds: result.seconds, wallSeconds };
}

function figure(name: string, rounds: number[], unit: Figure['unit'], target: Figure['target']): Figure {
  const f: Figure = { name, rounds, unit, target };
  printFigure(f);
  return f;
}

function metadata(actor: string): NewEvent['metadata'] {
  return { actor, requestId: randomUUID(), correlationId: randomUUID(), causationId: null, schemaVersion: 1 };
}

/** `revisions` renames of one brain, one event each; the positions they were appended at. */
async function reviseBrain(store: EventStore, brainId: number, revisions: number): Promise<string[]> {
  const positions: string[] = [];
  for (let i = 1; i <= revisions; i++) {
    const result = await store.appendToStream(`brain-${brainId}`, [
      {
        id: randomUUID(),
        type: 'BrainUpdated',
        data: {
          brainId,
          changes: { name: `revision ${i}` },
          updatedBy: 1,
          updatedAt: new Date().toISOString(),
        },
        metadata: metadata('1'),
      },
    ]);
    positions.push(formatPosition(result.position));
  }
  return positions;
}

/**
 * User `userId` becomes staff with a known password (the generated users' hashes are random) and
 * can log in by e-mail (login finds the account through the e-mail's reservation stream).
 */
async function makeStaff(store: EventStore, userId: number): Promise<void> {
  await store.appendToStream(reservationStreamName('email', `bench${userId}@example.org`), [
    {
      id: randomUUID(),
      type: 'ValueReserved',
      data: {
        scope: 'email',
        value: `bench${userId}@example.org`,
        ownerId: `user-${userId}`,
        reservedAt: new Date().toISOString(),
      },
      metadata: metadata('system'),
    },
  ]);
  const passwordHash = await createPasswordHasher(10).hash(STAFF_PASSWORD);
  const now = new Date().toISOString();
  await store.appendToStream(`user-${userId}`, [
    {
      id: randomUUID(),
      type: 'UserPasswordChanged',
      data: { userId, passwordHash, changedAt: now },
      metadata: metadata('system'),
    },
    {
      id: randomUUID(),
      type: 'UserStaffStatusChanged',
      data: { userId, isStaff: true, changedAt: now },
      metadata: metadata('system'),
    },
  ]);
}

async function recordedSpan(pool: pg.Pool): Promise<{ from: number; to: number }> {
  const { rows } = await pool.query<{ first: Date; last: Date }>(
    'SELECT min(recorded_at) AS first, max(recorded_at) AS last FROM audit_events',
  );
  return { from: rows[0]!.first.getTime(), to: rows[0]!.last.getTime() };
}

/** Varied uncached requests: a type (or two) and a window of 1 % to 10 % of the span at a random place. */
function eventLogPaths(span: { from: number; to: number }, count: number): string[] {
  const types = [
    'BrainCreated',
    'UploadReceived',
    'BrainUpdated',
    'BrainCreated,UploadReceived',
    'UserRegistered',
  ];
  const width = span.to - span.from;
  const paths: string[] = [];
  for (let i = 0; i < count; i++) {
    const size = width * (0.01 + Math.random() * 0.09);
    const since = span.from + Math.random() * (width - size);
    const query = new URLSearchParams({
      type: types[i % types.length]!,
      since: new Date(since).toISOString(),
      until: new Date(since + size).toISOString(),
    });
    paths.push(`/api/audit/events/?${query.toString()}`);
  }
  return paths;
}

async function login(baseUrl: string, email: string, password: string): Promise<string> {
  const response = await fetch(`${baseUrl}/api/auth/login/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  if (!response.ok) throw new Error(`login: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { token: string }).token;
}

/** Streams the whole export and counts its lines. */
async function exportAll(baseUrl: string, headers: Record<string, string>): Promise<number> {
  // node:http and memchr (Buffer.indexOf): the client's own work small beside the server's, on the
  // same two cores (fetch's web stream and a loop over every byte took a core of their own).
  return new Promise((resolve, reject) => {
    const request = http.get(
      `${baseUrl}/api/audit/events/?include_internal=true`,
      { headers: { ...headers, accept: 'application/x-ndjson' } },
      (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          return reject(new Error(`export: ${response.statusCode}`));
        }
        let lines = 0;
        response.on('data', (chunk: Buffer) => {
          for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
        });
        response.once('end', () => resolve(lines));
        response.once('error', reject);
      },
    );
    request.once('error', reject);
  });
}
