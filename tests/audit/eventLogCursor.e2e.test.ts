import { type CuratedService, startCuratedService } from '#tests/support/curatedService';

/**
 * The event log's cursor (decisions.md "Audit"): a client that follows `next`, then polls with
 * `after` = the last position it saw, receives every matching event exactly once, in global order,
 * while 8 writers keep appending. Two such clients (one filtered, one reading everything with the
 * bookkeeping) are compared with the log read once the writers have stopped, and with what the
 * writers made.
 */
const WRITERS = 8;
const CATEGORIES_PER_WRITER = 15;

interface Entry {
  position: string;
  id: string;
  type: string;
  resource: { type: string; id: number | string } | null;
}

let world: CuratedService;

beforeAll(async () => {
  world = await startCuratedService();
});
afterAll(() => world?.service.close());

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const positionOf = (entry: Entry): [bigint, bigint] => {
  const [commit, prepare] = entry.position.split('.').map(BigInt) as [bigint, bigint];
  return [commit, prepare];
};

function expectStrictlyIncreasing(entries: readonly Entry[]): void {
  for (let i = 1; i < entries.length; i++) {
    const [ac, ap] = positionOf(entries[i - 1]!);
    const [bc, bp] = positionOf(entries[i]!);
    expect(ac < bc || (ac === bc && ap < bp)).toBe(true);
  }
  expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
}

async function page(path: string): Promise<{ results: Entry[]; next: string | null }> {
  const res = await world.api.get(path.replace(world.service.url, ''), { token: world.staff });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
  return res.body as { results: Entry[]; next: string | null };
}

/** Follows `next`, then polls with `after` until `stopped()` and a poll after it finds nothing. */
async function tail(query: string, stopped: () => boolean): Promise<{ entries: Entry[]; polls: number }> {
  const entries: Entry[] = [];
  let url = `/api/audit/events/?${query}`;
  let polls = 0;
  for (;;) {
    const wasStopped = stopped();
    const { results, next } = await page(url);
    entries.push(...results);
    polls++;
    if (next) {
      expect(results.length).toBeGreaterThan(0);
      url = next;
      continue;
    }
    if (wasStopped && results.length === 0) return { entries, polls };
    const last = entries[entries.length - 1];
    url = `/api/audit/events/?${query}${last ? `&after=${last.position}` : ''}`;
    await sleep(10);
  }
}

async function readAll(query: string): Promise<Entry[]> {
  const entries: Entry[] = [];
  let url: string | null = `/api/audit/events/?${query}&limit=1000`;
  while (url) {
    const { results, next } = await page(url);
    entries.push(...results);
    url = next;
  }
  return entries;
}

async function writer(n: number, made: { categories: number[]; species: number[] }): Promise<void> {
  for (let i = 0; i < CATEGORIES_PER_WRITER; i++) {
    const name = `cursor${process.pid}w${n}c${i}`;
    const category = await world.api.post('/api/categories/', { token: world.staff, json: { name } });
    if (category.status !== 201) throw new Error(`category: ${category.status} ${category.text}`);
    made.categories.push(category.body.id as number);
    if (i % 3 !== 0) continue;
    const species = await world.api.post('/api/species/', {
      token: world.staff,
      json: {
        name: `${name}sp`,
        scientific_name: `Cursor${n}x${i}x${process.pid} alba`,
        category: category.body.id,
      },
    });
    if (species.status !== 201) throw new Error(`species: ${species.status} ${species.text}`);
    made.species.push(species.body.id as number);
  }
}

test('following next and then polling with after neither skips nor repeats while 8 writers append', async () => {
  let stopped = false;
  const made = { categories: [] as number[], species: [] as number[] };
  const readers = [
    tail('resource_type=category&limit=5', () => stopped),
    tail('include_internal=true&limit=13', () => stopped),
    tail('type=SpeciesCreated,CategoryCreated&limit=4', () => stopped),
  ];
  await Promise.all(Array.from({ length: WRITERS }, (_, n) => writer(n, made)));
  stopped = true;
  const [categories, everything, created] = await Promise.all(readers);

  expect(made.categories).toHaveLength(WRITERS * CATEGORIES_PER_WRITER);
  // Readers polled while the writers wrote (not one read after the end).
  expect(everything!.polls).toBeGreaterThan(10);
  for (const reader of [categories!, everything!, created!]) expectStrictlyIncreasing(reader.entries);

  // Each reader saw exactly the log as it reads once the writers have stopped: same events, same order.
  expect(categories!.entries.map((e) => e.id)).toEqual(
    (await readAll('resource_type=category')).map((e) => e.id),
  );
  expect(everything!.entries.map((e) => e.id)).toEqual(
    (await readAll('include_internal=true')).map((e) => e.id),
  );
  expect(created!.entries.map((e) => e.id)).toEqual(
    (await readAll('type=SpeciesCreated,CategoryCreated')).map((e) => e.id),
  );

  // And what the writers made, each exactly once.
  const createdIds = (entries: readonly Entry[], type: string): number[] =>
    entries.filter((e) => e.type === type).map((e) => e.resource!.id as number);
  for (const reader of [categories!, everything!, created!])
    expect(createdIds(reader.entries, 'CategoryCreated').sort((a, b) => a - b)).toEqual(
      [...made.categories].sort((a, b) => a - b),
    );
  for (const reader of [everything!, created!])
    expect(createdIds(reader.entries, 'SpeciesCreated').sort((a, b) => a - b)).toEqual(
      [...made.species].sort((a, b) => a - b),
    );
  expect(categories!.entries.every((e) => e.resource?.type === 'category')).toBe(true);
}, 120_000);
