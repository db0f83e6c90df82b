import pg from 'pg';
import type { EventStore } from '#shared/eventStore/eventStore';
import { createPostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import { ProjectionProgress } from '#shared/projections/projectionProgress';
import { ProjectionRunner } from '#shared/projections/projectionRunner';
import { allProjections } from '#services/projector/projections/allProjections';
import { percentile } from './stats';
import { profileUpdated, userRegistered } from './benchEvents';

const USERS = 200;
/** A write not projected within this long counts as lost for the benchmark (it fails the run). */
const WAIT_LIMIT_MS = 5000;

export interface LagRound {
  readonly p50: number;
  readonly p99: number;
  readonly writes: number;
  readonly achievedRate: number;
}

export interface LagBench {
  round(rate: number, durationMs: number): Promise<LagRound>;
  close(): Promise<void>;
}

/**
 * The real ProjectionRunner with the real projections on its own database, fed by appends through
 * the store. Lag = from an append's resolve until ProjectionProgress reports its position applied.
 */
export async function startLagBench(databaseUrl: string): Promise<LagBench> {
  const store = createPostgresEventStore({ connectionString: databaseUrl, poolSize: 10 });
  await store.migrate();
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  pool.on('error', () => undefined); // an idle connection dropping is not a benchmark failure
  const progress = new ProjectionProgress();
  const runner = new ProjectionRunner({ store, pool, projections: allProjections, progress });
  runner.start();
  const close = async (): Promise<void> => {
    await runner.stop();
    await pool.end();
    await store.close();
  };
  await seedUsers(store, progress).catch(async (error: unknown) => {
    await close();
    throw error;
  });
  return { round: (rate, durationMs) => steadyWrites(store, progress, rate, durationMs), close };
}

/** Profile updates need users to update; the run starts once the projector has them all. */
async function seedUsers(store: EventStore, progress: ProjectionProgress): Promise<void> {
  let last;
  for (let userId = 1; userId <= USERS; userId++) {
    last = await store.appendToStream(`user-${userId}`, [userRegistered(userId)], {
      expectedRevision: 'any',
    });
  }
  if (last && !(await progress.waitFor(last.position, 30_000)))
    throw new Error('the projector did not catch up with the seeded users');
}

/** Open loop: write i starts at start + i/rate whatever earlier writes do, so a slow projector cannot slow the load. */
async function steadyWrites(
  store: EventStore,
  progress: ProjectionProgress,
  rate: number,
  durationMs: number,
): Promise<LagRound> {
  const interval = 1000 / rate;
  const writes: Promise<number>[] = [];
  const start = performance.now();
  for (let i = 0; i * interval < durationMs; i++) {
    const wait = start + i * interval - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const write = writeAndWatch(store, progress, 1 + (i % USERS));
    write.catch(() => undefined); // reported by Promise.all below; must not crash the run meanwhile
    writes.push(write);
  }
  const achievedRate = writes.length / ((performance.now() - start) / 1000);
  const lags = await Promise.all(writes);
  return { p50: percentile(lags, 50), p99: percentile(lags, 99), writes: lags.length, achievedRate };
}

async function writeAndWatch(
  store: EventStore,
  progress: ProjectionProgress,
  userId: number,
): Promise<number> {
  const { position } = await store.appendToStream(`user-${userId}`, [profileUpdated(userId)], {
    expectedRevision: 'any',
  });
  const appended = performance.now();
  if (!(await progress.waitFor(position, WAIT_LIMIT_MS)))
    throw new Error(`an append was not projected within ${WAIT_LIMIT_MS} ms`);
  return performance.now() - appended;
}
