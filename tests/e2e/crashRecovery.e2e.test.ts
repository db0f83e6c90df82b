import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { eventTypeCountsProjection } from '../../services/projector/projections/eventTypeCountsProjection';
import { accountsThatCannotLogIn, brokenPromises } from '../support/acknowledgedWrites';
import { freePort } from '../support/freePort';
import {
  appliedEventCounts,
  identityTotals,
  storedEventCounts,
  waitUntilCaughtUp,
} from '../support/readModelAudit';
import { spawnAllInOne, type ServiceProcess } from '../support/spawnService';
import { createTestDatabase } from '../support/testPostgres';
import { startWriteLoad } from '../support/writeLoad';

/**
 * The all-in-one is killed with SIGKILL at random moments while clients write over HTTP, and
 * restarted on the same database. Afterwards every stored event must have been applied by every
 * projection exactly once, and every write a client saw acknowledged must be there.
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

async function serviceEnv(): Promise<Record<string, string>> {
  return {
    // PostgreSQL is the harness's: it outlives every kill, as a real database server would.
    DATABASE_URL: await createTestDatabase('crash'),
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    PASSWORD_HASH_LOG_N: '10',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_DEFAULT: '1000000/minute',
    RATE_LIMIT_REGISTER: '1000000/hour',
    RATE_LIMIT_LOGIN: '1000000/minute',
    RATE_LIMIT_TOKEN_CREATE: '1000000/hour',
  };
}

test('SIGKILL under write load: no event skipped or applied twice, no acknowledged write lost', async () => {
  const env = await serviceEnv();
  service = await spawnAllInOne(env);
  const load = startWriteLoad(service.url, CLIENTS);
  const acknowledgedAtKill: number[] = [];
  for (let kill = 0; kill < KILLS; kill++) {
    await sleep(randomBetween(300, 1500));
    acknowledgedAtKill.push(load.ledger.acknowledged);
    await service.kill();
    service = await spawnAllInOne(env);
  }
  await sleep(1000); // the last start must also cope with load while it catches up
  await load.stop();

  const { ledger } = load;
  const context = `acknowledged at each kill ${acknowledgedAtKill.join(', ')}; total ${ledger.acknowledged}, unanswered ${ledger.unreachable}`;
  expect({ context, unexpected: ledger.unexpected }).toEqual({ context, unexpected: [] });
  expect(ledger.registered.length).toBeGreaterThan(KILLS);
  expect(ledger.issuedTokens.size).toBeGreaterThan(KILLS);

  db = new Client({ connectionString: env.DATABASE_URL });
  await db.connect();
  await waitUntilCaughtUp(db, 20_000);

  // event_type_counts is a plain counter: a skipped event shows as too low, a repeated one as too high.
  expect(await appliedEventCounts(db)).toEqual(
    await storedEventCounts(db, eventTypeCountsProjection.eventTypes),
  );
  const identity = await identityTotals(db);
  expect(identity.readModel).toEqual(identity.events);
  expect(await brokenPromises(db, ledger)).toEqual([]);
  expect(await accountsThatCannotLogIn(service.url, ledger.registered)).toEqual([]);
}, 90_000);
