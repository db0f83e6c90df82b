import path from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createPostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import type { EventStore, NewEvent } from '#shared/eventStore/eventStore';
import { READ_MODEL_SCHEMA } from '#shared/projections/projection';
import { ProjectionRunner } from '#shared/projections/projectionRunner';
import { createPasswordHasher } from '#shared/auth/passwords';
import { reservationStreamName } from '#shared/domain/reservation/reservation';
import { allProjections } from '#services/projector/projections/allProjections';
import { brainForm, nifti } from '#tests/e2e/brains/brainFixtures';
import type { BenchPostgres } from './benchPostgres';
import { startBenchService } from './benchService';
import { SEARCH_WORD, SPECIES } from './catalogueEvents';
import { writeCatalogue } from './catalogueWriter';
import type { Cleanup } from './cleanup';
import { milliseconds, percent, type Figure } from './figure';
import { checked, generateLoad, type LoadResult, stopLoadGenerators, summarise } from './loadGenerator';
import { listTargets } from './listTargets';
import { printDetail, printFigure, printSection } from './report';

/** Issue 19: a user's brains list and search p99 within 20 % of an anonymous caller's. */
const RATIO_TARGET = 1.2;
const SHARED_PRIVATE_BRAINS = 50;
const PASSWORD = 'bench-visibility-password';
/** Generated users (catalogueEvents: 1..500) that get a known password: the reader, a stranger, the uploader. */
const READER = 2;
const STRANGER = 4;
const UPLOADER = 3;

export interface VisibilityPlan {
  readonly brains: number;
  readonly rounds: number;
  readonly connections: number;
  readonly durationSeconds: number;
}

type Caller = 'anonymous' | 'stranger' | 'reader';
const CALLERS: readonly Caller[] = ['anonymous', 'stranger', 'reader'];
type Kind = 'list' | 'search';
type Cache = 'cached' | 'uncached';

/**
 * The brains list (`?species=&page=`) and search (`+search=`), each over 1000 random species and
 * pages, for three callers: anonymous, a user with no shared brain (what authentication alone
 * costs), and a user with 50 private brains shared with them (collaborator) among `brains` public
 * ones; on the service as configured (answers kept) and with LIST_CACHE_MB=0 (every request runs its
 * queries). Each caller is held at the same rate (half of the anonymous full rate of that kind), in
 * rotated order per round; the figure is the reader's p99 over the anonymous p99, per round.
 */
export async function measureVisibility(
  bench: BenchPostgres,
  cleanup: Cleanup,
  plan: VisibilityPlan,
): Promise<Figure[]> {
  printSection(
    `visibility: ${SHARED_PRIVATE_BRAINS} private brains shared with a user among ${plan.brains.toLocaleString('en-US')} public ones`,
  );
  const databaseUrl = await bench.createDatabase('bench_visibility');
  await seed(databaseUrl, cleanup, plan.brains);
  const cached = await startBenchService(databaseUrl, path.join(bench.scratchDir, 'visibility'));
  const closeCached = cleanup.defer('visibility all-in-one', () => cached.close());
  const uncached = await startBenchService(databaseUrl, path.join(bench.scratchDir, 'visibility'), {
    listCache: false,
  });
  const closeUncached = cleanup.defer('visibility uncached all-in-one', () => uncached.close());
  cleanup.defer('load generators', stopLoadGenerators);

  const tokens = await shareBrains(cached.url);
  const targets = await listTargets(cached.url);
  await sanityCheck(cached.url, tokens);
  const paths: Record<Kind, readonly string[]> = { list: targets.list, search: targets.search };
  const origins: Record<Cache, string> = { cached: cached.url, uncached: uncached.url };
  const headers = (caller: Caller): Record<string, string> =>
    caller === 'anonymous' ? {} : { authorization: `Token ${tokens[caller]}` };
  const run = (kind: Kind, cache: Cache, caller: Caller, seconds: number, rate?: number) =>
    generateLoad({
      url: origins[cache],
      paths: paths[kind],
      connections: plan.connections,
      durationSeconds: seconds,
      headers: headers(caller),
      ...(rate === undefined ? {} : { overallRate: rate }),
    }).then(checked);

  const figures: Figure[] = [];
  for (const cache of ['cached', 'uncached'] as const)
    for (const kind of ['list', 'search'] as const) {
      // Every caller asks every path once first (each one's answers kept alike where they are
      // kept: a kept answer is per view), then a short run at full rate; then the rate to hold.
      if (cache === 'cached')
        for (const caller of CALLERS)
          await askEveryPath(origins[cache], paths[kind], headers(caller), plan.connections);
      for (const caller of CALLERS) await run(kind, cache, caller, 1);
      const full = await run(kind, cache, 'anonymous', plan.durationSeconds);
      const rate = Math.max(1, Math.round(full.requestsPerSecond / 2));
      const results = new Map<Caller, LoadResult[]>(CALLERS.map((c) => [c, []]));
      for (let round = 0; round < plan.rounds; round++) {
        const order = CALLERS.map((_, i) => CALLERS[(i + round) % CALLERS.length]!);
        for (const caller of order)
          results.get(caller)!.push(await run(kind, cache, caller, plan.durationSeconds, rate));
        printDetail(
          `${cache} ${kind} at ${rate} req/s, round ${round + 1}: ${order.map((c) => `${c} ${summarise(results.get(c)!.at(-1)!)}`).join('; ')}`,
        );
      }
      figures.push(
        ...report(
          `${cache === 'uncached' ? 'uncached: ' : ''}brains ${kind === 'list' ? 'list' : `search=${SEARCH_WORD}`}`,
          rate,
          results,
        ),
      );
    }
  figures.forEach(printFigure);
  await closeUncached();
  await closeCached();
  return figures;
}

async function askEveryPath(
  origin: string,
  paths: readonly string[],
  headers: Record<string, string>,
  concurrency: number,
): Promise<void> {
  const queue = [...paths];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let next = queue.pop(); next !== undefined; next = queue.pop())
        await call(origin, next, { headers });
    }),
  );
}

function report(name: string, rate: number, results: Map<Caller, LoadResult[]>): Figure[] {
  const p99 = (caller: Caller) => results.get(caller)!.map((r) => r.latencyP99Ms);
  const ratio = (caller: Caller) => p99(caller).map((ms, i) => ms / Math.max(0.1, p99('anonymous')[i]!));
  const info = (label: string, rounds: number[]): Figure => ({
    name: label,
    rounds,
    unit: milliseconds,
    target: undefined,
  });
  return [
    info(`${name} p99 at ${rate} req/s, anonymous`, p99('anonymous')),
    info(`${name} p99 at ${rate} req/s, user without shares`, p99('stranger')),
    info(
      `${name} p99 at ${rate} req/s, user with ${SHARED_PRIVATE_BRAINS} shared private brains`,
      p99('reader'),
    ),
    {
      name: `${name} p99: user without shares / anonymous`,
      rounds: ratio('stranger'),
      unit: percent,
      target: undefined,
    },
    {
      name: `${name} p99: user with ${SHARED_PRIVATE_BRAINS} shared / anonymous`,
      rounds: ratio('reader'),
      unit: percent,
      target: { kind: 'at most', value: RATIO_TARGET },
    },
  ];
}

/** The generated catalogue (every brain public: BrainCreated without a visibility), read models rebuilt. */
async function seed(databaseUrl: string, cleanup: Cleanup, brains: number): Promise<void> {
  const store = createPostgresEventStore({ connectionString: databaseUrl, poolSize: 10 });
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  pool.on('error', () => undefined);
  const close = cleanup.defer('visibility store', async () => {
    await pool.end();
    await store.close();
  });
  await store.migrate();
  const started = performance.now();
  const written = await writeCatalogue(store, brains, () => undefined);
  for (const userId of [READER, STRANGER, UPLOADER]) await allowLogin(store, userId);
  const runner = new ProjectionRunner({ store, pool, projections: allProjections, batchSize: 2000 });
  const applied = await runner.catchUp(() => undefined);
  const { rows } = await pool.query<{ name: string }>(
    `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname = $1`,
    [READ_MODEL_SCHEMA],
  );
  for (const { name } of rows) await pool.query(`VACUUM (ANALYZE) ${name}`);
  printDetail(
    `seeded ${written.brains} brains (${written.events} events, ${applied} applied by the projections, read models vacuumed) in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  await close();
}

const metadata = (actor: string): NewEvent['metadata'] => ({
  actor,
  requestId: randomUUID(),
  correlationId: randomUUID(),
  causationId: null,
  schemaVersion: 1,
});

/** A generated user (random password hash) gets a known password and can log in by e-mail. */
async function allowLogin(store: EventStore, userId: number): Promise<void> {
  const email = `bench${userId}@example.org`;
  await store.appendToStream(reservationStreamName('email', email), [
    {
      id: randomUUID(),
      type: 'ValueReserved',
      data: { scope: 'email', value: email, ownerId: `user-${userId}`, reservedAt: new Date().toISOString() },
      metadata: metadata('system'),
    },
  ]);
  await store.appendToStream(`user-${userId}`, [
    {
      id: randomUUID(),
      type: 'UserPasswordChanged',
      data: {
        userId,
        passwordHash: await createPasswordHasher(10).hash(PASSWORD),
        changedAt: new Date().toISOString(),
      },
      metadata: metadata('system'),
    },
  ]);
}

async function call(baseUrl: string, pathName: string, init: RequestInit): Promise<any> {
  const response = await fetch(`${baseUrl}${pathName}`, init);
  if (!response.ok)
    throw new Error(`${init.method ?? 'GET'} ${pathName}: ${response.status} ${await response.text()}`);
  return response.json();
}

async function login(baseUrl: string, userId: number): Promise<string> {
  const body = JSON.stringify({ email: `bench${userId}@example.org`, password: PASSWORD });
  const reply = await call(baseUrl, '/api/auth/login/', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  return reply.token as string;
}

/**
 * Through the API, as a lab would: the uploader creates the private brains (under the first
 * species' atlas, named with the search word so search finds them too) and shares each with the reader.
 */
async function shareBrains(baseUrl: string): Promise<Record<Exclude<Caller, 'anonymous'>, string>> {
  const [reader, stranger, uploader] = await Promise.all([
    login(baseUrl, READER),
    login(baseUrl, STRANGER),
    login(baseUrl, UPLOADER),
  ]);
  const started = performance.now();
  for (let i = 1; i <= SHARED_PRIVATE_BRAINS; i++) {
    const brain = await call(baseUrl, '/api/brains/', {
      method: 'POST',
      headers: { authorization: `Token ${uploader}` },
      body: brainForm({ name: `private ${SEARCH_WORD} ${i}`, atlas: 1, visibility: 'private' }, nifti()),
    });
    await call(baseUrl, `/api/brains/${brain.id}/collaborators/`, {
      method: 'POST',
      headers: { authorization: `Token ${uploader}`, 'content-type': 'application/json' },
      body: JSON.stringify({ user: `bench${READER}@example.org`, role: 'viewer' }),
    });
  }
  printDetail(
    `${SHARED_PRIVATE_BRAINS} private brains created and shared with user ${READER} over HTTP in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return { reader, stranger };
}

/** The reader sees the 50 more in the first species (atlas 1's), the others do not. */
async function sanityCheck(
  baseUrl: string,
  tokens: Record<Exclude<Caller, 'anonymous'>, string>,
): Promise<void> {
  const species = encodeURIComponent(SPECIES[0]![0]);
  const count = async (token?: string) =>
    (
      await call(baseUrl, `/api/brains/?species=${species}&page_size=1`, {
        headers: token ? { authorization: `Token ${token}` } : {},
      })
    ).count as number;
  const [anonymous, stranger, reader] = await Promise.all([
    count(),
    count(tokens.stranger),
    count(tokens.reader),
  ]);
  if (stranger !== anonymous || reader !== anonymous + SHARED_PRIVATE_BRAINS)
    throw new Error(
      `${SPECIES[0]![0]}: anonymous ${anonymous}, stranger ${stranger}, reader ${reader} brains`,
    );
  printDetail(
    `${SPECIES[0]![0]}: ${anonymous} brains for anonymous and the stranger, ${reader} for the reader`,
  );
}
