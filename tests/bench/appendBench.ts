import type { EventStore, ExpectedRevision, NewEvent } from '#shared/eventStore/eventStore';
import { createPostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import type { BenchPostgres } from './benchPostgres';
import { profileUpdated } from './benchEvents';
import type { Cleanup } from './cleanup';
import { perSecond, type Figure, type Unit } from './figure';
import { printFigure, printSection } from './report';

export const WRITERS = 4;
/** Issue 22's targets. */
const SINGLE_TARGET = 5000;
const BATCHED_TARGET = 50_000;

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
  const measured = async (name: string, label: string, size: number, unit: Unit, atLeast: number) => {
    const rounds = await timedRounds(() => appendRate(store, label, size, plan.roundMs), plan.rounds);
    const figure: Figure = { name, rounds, unit, target: { kind: 'at least', value: atLeast } };
    printFigure(figure);
    return figure;
  };
  const singleFigure = await measured(
    'single-event appends',
    'single',
    1,
    perSecond('appends'),
    SINGLE_TARGET,
  );
  const batchedFigure = await measured(
    'batched appends (100 events each)',
    'batched',
    100,
    perSecond('events'),
    BATCHED_TARGET,
  );
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
