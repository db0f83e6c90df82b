import type { EventStore, ExpectedRevision, NewEvent } from '#shared/eventStore/eventStore';
import { createPostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import type { BenchPostgres } from './benchPostgres';
import { profileUpdated } from './benchEvents';
import type { Cleanup } from './cleanup';
import { perSecond, type Figure } from './figure';
import { printFigure, printSection } from './report';

export const WRITERS = 4;

/**
 * Appends for `durationMs` with WRITERS concurrent writers, each on its own stream with the exact
 * expected revision (as a command handler appends); returns events appended per second.
 */
export async function appendRate(
  store: EventStore,
  label: string,
  eventsPerAppend: number,
  durationMs: number,
): Promise<number> {
  const deadline = performance.now() + durationMs;
  const started = performance.now();
  const counts = await Promise.all(
    Array.from({ length: WRITERS }, (_, writer) =>
      appendUntil(store, `bench_${label}-${writer}`, eventsPerAppend, deadline, writer + 1),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  return counts.reduce((a, b) => a + b, 0) / seconds;
}

async function appendUntil(
  store: EventStore,
  stream: string,
  size: number,
  deadline: number,
  userId: number,
): Promise<number> {
  let expected: ExpectedRevision = 'any'; // the stream may exist from an earlier round
  let appended = 0;
  while (performance.now() < deadline) {
    const events: NewEvent[] = Array.from({ length: size }, () => profileUpdated(userId));
    const result = await store.appendToStream(stream, events, { expectedRevision: expected });
    expected = result.nextExpectedRevision;
    appended += size;
  }
  return appended;
}

/** Single-event and 100-event appends, ROUNDS timed rounds each after one untimed warm-up. */
export async function measureAppends(
  pg: BenchPostgres,
  cleanup: Cleanup,
  plan: { rounds: number; roundMs: number },
): Promise<Figure[]> {
  printSection(
    `appends through the EventStore port (${WRITERS} concurrent writers, ${plan.rounds} rounds of ${plan.roundMs / 1000} s)`,
  );
  const store = createPostgresEventStore({
    connectionString: await pg.createDatabase('bench_appends'),
    poolSize: 10,
  });
  const closeStore = cleanup.defer('append store', () => store.close());
  await store.migrate();
  const single = await timedRounds(() => appendRate(store, 'single', 1, plan.roundMs), plan.rounds);
  const singleFigure: Figure = {
    name: 'single-event appends',
    rounds: single,
    unit: perSecond('appends'),
    target: { kind: 'at least', value: 1500 },
  };
  printFigure(singleFigure);
  const batched = await timedRounds(() => appendRate(store, 'batched', 100, plan.roundMs), plan.rounds);
  const batchedFigure: Figure = {
    name: 'batched appends (100 events each)',
    rounds: batched,
    unit: perSecond('events'),
    target: { kind: 'at least', value: 20_000 },
  };
  printFigure(batchedFigure);
  await closeStore();
  return [singleFigure, batchedFigure];
}

/** The first run warms connections, prepared statements and the JIT; it is not reported. */
async function timedRounds(measure: () => Promise<number>, rounds: number): Promise<number[]> {
  await measure();
  const results: number[] = [];
  for (let i = 0; i < rounds; i++) results.push(await measure());
  return results;
}
