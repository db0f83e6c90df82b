import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { eventTypeCountsProjection } from '#services/projector/projections/eventTypeCountsProjection';
import { accountsThatCannotLogIn, brokenPromises } from '#tests/support/acknowledgedWrites';
import {
  appliedEventCounts,
  identityTotals,
  searchIndexDifferences,
  storedEventCounts,
  waitUntilCaughtUp,
} from '#tests/support/readModelAudit';
import { spawnedServiceEnv } from '#tests/support/serviceEnv';
import { spawnAllInOne, type ServiceProcess } from '#tests/support/spawnService';
import { client } from '#tests/support/httpClient';
import { differencesFromFreshRebuild } from '#tests/support/faults/freshRebuild';
import { createTestDatabase } from '#tests/support/testPostgres';
import { startWriteLoad, type WriteLoad } from '#tests/support/writeLoad';
import { waitFor } from '#tests/support/waitFor';

/**
 * The all-in-one is killed with SIGKILL at random moments while clients write over HTTP (accounts,
 * tokens, profiles, catalogue atlases, and brains created, updated and deleted), and restarted on the same database. Afterwards every
 * stored event must have been applied by every projection exactly once, every read model must equal
 * a fresh rebuild from the events (the search index too, which must also agree with the brains read
 * model and keep exact counts), and every write a client saw acknowledged must be there.
 */
const KILLS = 4;
const CLIENTS = 6;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const randomBetween = (min: number, max: number): number => min + Math.floor(Math.random() * (max - min));

let service: ServiceProcess | undefined;
let db: Client | undefined;
const dataDir = mkdtempSync(path.join(tmpdir(), 'catalogue-crash-'));

afterAll(async () => {
  await service?.kill();
  await db?.end();
  rmSync(dataDir, { recursive: true, force: true });
});

function serviceEnv(): Promise<Record<string, string>> {
  return spawnedServiceEnv('crash', dataDir, {
    ADMIN_EMAIL: STAFF.email,
    ADMIN_PASSWORD: STAFF.password,
    ADMIN_USERNAME: 'curator',
    // Brains' files are processed under the kills too; a claim a kill interrupted is taken back
    // once its lease has run out, so the lease is short here.
    PROCESSOR_LEASE_SECONDS: '2',
  });
}

const STAFF = { email: 'curator@crash.example.org', password: 'curator-password' };

/** A category and a species (staff only) whose atlases the load clients create. */
async function catalogueSpecies(url: string): Promise<number> {
  const api = client(url);
  const token = (await api.post('/api/auth/login/', { json: STAFF })).body.token as string;
  const category = await api.post('/api/categories/', { token, json: { name: 'rodents' } });
  expect(category.status).toBe(201);
  const species = await api.post('/api/species/', {
    token,
    json: { name: 'house mouse', scientific_name: 'Mus musculus', category: 'rodents' },
  });
  expect(species.status).toBe(201);
  return species.body.id as number;
}

/** Acknowledged brain creates missing from the search index, acknowledged deletes still in it. */
async function brainsBrokenInSearch(db: Client, ledger: WriteLoad['ledger']): Promise<string[]> {
  const { rows } = await db.query<{ brain_id: number }>(
    'SELECT brain_id FROM brain_search WHERE NOT removed',
  );
  const indexed = new Set(rows.map((r) => r.brain_id));
  return [
    ...[...ledger.createdBrains.keys()]
      .filter((id) => !ledger.deletedBrains.has(id) && !ledger.maybeDeletedBrains.has(id) && !indexed.has(id))
      .map((id) => `created brain ${id} is not in the search index`),
    ...[...ledger.deletedBrains]
      .filter((id) => indexed.has(id))
      .map((id) => `deleted brain ${id} is still indexed`),
  ];
}

test('SIGKILL under write load: no event skipped or applied twice, no acknowledged write lost', async () => {
  const env = await serviceEnv();
  service = await spawnAllInOne(env);
  const speciesId = await catalogueSpecies(service.url);
  const load = startWriteLoad(service.url, CLIENTS, { atlasSpeciesId: speciesId });
  const acknowledgedAtKill: number[] = [];
  for (let kill = 0; kill < KILLS; kill++) {
    await sleep(randomBetween(300, 1500));
    acknowledgedAtKill.push(load.ledger.acknowledged);
    await service.kill();
    // A start under write load, on a busy machine, may take longer than an idle one.
    service = await spawnAllInOne(env, 60_000);
  }
  // The last start must also cope with load while it catches up, and take brains: on a busy
  // machine a create (an upload, stored and synced) may outlast every window between two kills.
  await sleep(1000);
  await waitFor('a brain created under the load', () => load.ledger.createdBrains.size > 0, {
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  await load.stop();

  const { ledger } = load;
  const context = `acknowledged at each kill ${acknowledgedAtKill.join(', ')}; total ${ledger.acknowledged}, unanswered ${ledger.unreachable}`;
  expect({ context, unexpected: ledger.unexpected }).toEqual({ context, unexpected: [] });
  expect(ledger.registered.length).toBeGreaterThan(KILLS);
  expect(ledger.issuedTokens.size).toBeGreaterThan(KILLS);

  const database = new Client({ connectionString: env.DATABASE_URL });
  db = database;
  await database.connect();
  // Nothing stays in processing after the kills (each upload ended completed or failed); then no one
  // appends any more, and the audit starts.
  await waitFor(
    'every upload to be processed',
    async () =>
      (await database.query(`SELECT id, status FROM file_uploads WHERE status IN ('uploaded', 'processing')`))
        .rows,
    { timeoutMs: 60_000, intervalMs: 250, until: (pending) => pending.length === 0 },
  );
  await waitUntilCaughtUp(db, 20_000);

  // event_type_counts is a plain counter: a skipped event shows as too low, a repeated one as too high.
  expect(await appliedEventCounts(db)).toEqual(
    await storedEventCounts(db, eventTypeCountsProjection.eventTypes),
  );
  const identity = await identityTotals(db);
  expect(identity.readModel).toEqual(identity.events);
  expect(await brokenPromises(db, ledger)).toEqual([]);
  const rebuilt = await differencesFromFreshRebuild(env.DATABASE_URL!, await createTestDatabase('rebuild'));
  expect(rebuilt).toEqual([]);
  expect(await searchIndexDifferences(db)).toEqual([]);
  expect(await brainsBrokenInSearch(db, ledger)).toEqual([]);
  // Every acknowledged atlas is there, and the species' count is exact.
  const atlases = (await client(service.url).get(`/api/atlases/?species=${speciesId}`)).body as {
    slug: string;
  }[];
  const slugs = new Set(atlases.map((a) => a.slug));
  expect([...ledger.createdAtlases.keys()].filter((slug) => !slugs.has(slug))).toEqual([]);
  expect(ledger.createdAtlases.size).toBeGreaterThan(0);
  expect(ledger.createdBrains.size).toBeGreaterThan(0);
  // Searched over HTTP by readable_id, an acknowledged brain that no delete may have touched comes first.
  const kept = [...ledger.createdBrains].find(
    ([id]) => !ledger.deletedBrains.has(id) && !ledger.maybeDeletedBrains.has(id),
  );
  if (kept) {
    const found = await client(service.url).get(`/api/brains/?search=${kept[1]}`);
    expect((found.body as { id: number }[])[0]?.id).toBe(kept[0]);
  }
  const species = (await client(service.url).get('/api/species/Mus-musculus/')).body as {
    atlases_count: number;
  };
  expect(species.atlases_count).toBe(atlases.length);
  expect(await accountsThatCannotLogIn(service.url, ledger.registered)).toEqual([]);
}, 300_000);
