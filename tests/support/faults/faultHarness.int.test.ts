import { Client } from 'pg';
import { client, newUser } from '#tests/support/httpClient';
import { waitUntilCaughtUp } from '#tests/support/readModelAudit';
import { createTestDatabase, serverUrl } from '#tests/support/testPostgres';
import { startTestService, type TestService } from '#tests/support/testService';
import { BackendTerminator } from './backendTerminator';
import { differencesFromFreshRebuild } from './freshRebuild';

/** The fault suite's instruments must be able to see a fault: each is shown failing on purpose. */
let service: TestService | undefined;
const open: { end(): Promise<void> }[] = [];

afterAll(async () => {
  await service?.close();
  for (const c of open) await c.end();
});

async function connect(url: string): Promise<Client> {
  const c = new Client({ connectionString: url });
  c.on('error', () => undefined); // terminated on purpose below
  await c.connect();
  open.push(c);
  return c;
}

test('the terminator cuts only LISTEN connections when asked, and every connection otherwise', async () => {
  const url = await createTestDatabase('victim');
  const terminator = await BackendTerminator.connect(serverUrl(), url);
  open.push({ end: () => terminator.close() });
  const listener = await connect(url);
  await listener.query('LISTEN anything');
  const worker = await connect(url);
  await worker.query('SELECT 1');
  expect(await terminator.count('listen')).toBe(1);
  expect(await terminator.terminate('listen')).toBe(1);
  await expect(worker.query('SELECT 1')).resolves.toBeDefined();
  expect(await terminator.count('all')).toBe(1); // the listener is gone (or going)
  expect(await terminator.terminate('all')).toBeGreaterThanOrEqual(1); // it may not have exited yet
  await expect(worker.query('SELECT 1')).rejects.toThrow();
});

test('the rebuild comparison sees a changed row and an event counted twice', async () => {
  service = await startTestService();
  const api = client(service.url);
  await newUser(api);
  const db = await connect(service.databaseUrl);
  await waitUntilCaughtUp(db, 20_000);
  const scratch = async (): Promise<string> => createTestDatabase('rebuild');
  expect(await differencesFromFreshRebuild(service.databaseUrl, await scratch())).toEqual([]);

  await db.query(`UPDATE users SET bio = 'not from any event'`);
  await db.query(`UPDATE event_type_counts SET events = events + 1 WHERE event_type = 'UserRegistered'`);
  const differences = await differencesFromFreshRebuild(service.databaseUrl, await scratch());
  expect(differences).toEqual([
    expect.stringMatching(/^users: row id=\d+ differs: bio live="not from any event" rebuilt=""$/),
    'event_type_counts: row event_type=UserRegistered differs: events live="2" rebuilt="1"',
  ]);
});
