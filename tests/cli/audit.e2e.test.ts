import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CURATOR } from '#tests/support/curatedService';
import { scratchDir } from '#tests/support/scratchDir';
import { type CliUser, type CliWorld, loggedInUser, startCliWorld, stopCliWorld } from './cliService';
import { cliEnv, freshConfigDir, runCli } from './runCli';

/** `bic audit events`: the event log as a table, as JSON, exported as NDJSON to a file. */
let world: CliWorld;
let user: CliUser;
let staffEnv: Record<string, string>;

interface Entry {
  position: string;
  type: string;
  resource: { type: string; id: number | string } | null;
}

async function serverLog(query: string): Promise<Entry[]> {
  const entries: Entry[] = [];
  let url: string | null = `/api/audit/events/?limit=1000&${query}`;
  while (url) {
    const res = await world.api.get(url.replace(world.service.url, ''), { token: world.staffToken });
    if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
    entries.push(...(res.body.results as Entry[]));
    url = res.body.next as string | null;
  }
  return entries;
}

beforeAll(async () => {
  world = await startCliWorld();
  user = await loggedInUser(world);
  staffEnv = cliEnv(world.service.url, freshConfigDir());
  const login = await runCli(['login', '--email', CURATOR.email, '--password-stdin'], staffEnv, {
    input: CURATOR.password,
  });
  if (login.code !== 0) throw new Error(`bic login: ${login.code} ${login.stderr}`);
  // Some history: a few categories (each with a uniqueness reservation and an allocated id).
  for (let i = 0; i < 6; i++) {
    const res = await world.api.post('/api/categories/', {
      token: world.staffToken,
      json: { name: `clicat${process.pid}x${i}` },
    });
    if (res.status !== 201) throw new Error(`category: ${res.status} ${res.text}`);
  }
});

afterAll(() => stopCliWorld(world));

const rowsOf = (stdout: string): string[] => stdout.replace(/\n$/, '').split('\n');

describe('bic audit events', () => {
  test('a table within 80 columns, oldest first, one page by default', async () => {
    const log = await serverLog('');
    const result = await runCli(['audit', 'events'], staffEnv);
    expect(result.code).toBe(0);
    const rows = rowsOf(result.stdout);
    expect(rows[0]).toMatch(/^POSITION\s+TIME \(UTC\)\s+TYPE\s+RESOURCE\s+ACTOR$/);
    for (const row of rows) expect(row.length).toBeLessThanOrEqual(80);
    expect(rows.slice(1).map((r) => r.split(/\s+/)[0])).toEqual(log.slice(0, 100).map((e) => e.position));
    const category = rows.find((r) => r.includes('CategoryCreated'))!;
    expect(category).toMatch(
      /^\d+\.\d+\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+CategoryCreated\s+category:\d+\s+curator$/,
    );
    const registered = rows.find((r) => r.includes('UserRegistered'))!;
    expect(registered).toMatch(/\ssystem$/);
  });

  test('filters as options; --limit follows the pages; --json', async () => {
    const categories = (await serverLog('type=CategoryCreated')).map((e) => e.position);
    expect(categories.length).toBeGreaterThanOrEqual(6);
    const filtered = await runCli(['audit', 'events', '--type', 'CategoryCreated', '--limit', '4'], staffEnv);
    expect(filtered.code).toBe(0);
    expect(
      rowsOf(filtered.stdout)
        .slice(1)
        .map((r) => r.split(/\s+/)[0]),
    ).toEqual(categories.slice(0, 4));
    expect(filtered.stderr).toContain(`--after ${categories[3]}`);

    const json = await runCli(
      ['audit', 'events', '--resource-type', 'category', '--include-internal', '--limit', '2000', '--json'],
      staffEnv,
    );
    expect(json.code).toBe(0);
    const body = JSON.parse(json.stdout) as { results: Entry[]; next: string | null };
    expect(body.next).toBeNull();
    expect(body.results).toEqual(await serverLog('resource_type=category&include_internal=true'));
    expect(body.results.some((e) => e.type === 'IdAllocated')).toBe(true);

    const after = await runCli(
      ['audit', 'events', '--type', 'CategoryCreated', '--after', categories[1]!, '--json'],
      staffEnv,
    );
    expect((JSON.parse(after.stdout) as { results: Entry[] }).results.map((e) => e.position)).toEqual(
      categories.slice(2),
    );
    const since = await runCli(
      ['audit', 'events', '--since', '2999-01-01T00:00:00Z', '--actor', String(user.id), '--json'],
      staffEnv,
    );
    expect(JSON.parse(since.stdout)).toEqual({ results: [], next: null });
  });

  test('--ndjson streams every matching event to a file', async () => {
    const dir = scratchDir('bic-audit-');
    const file = path.join(dir, 'events.ndjson');
    const result = await runCli(['audit', 'events', '--include-internal', '--ndjson', file], staffEnv);
    expect(result.code).toBe(0);
    const lines = readFileSync(file, 'utf8').replace(/\n$/, '').split('\n');
    const log = await serverLog('include_internal=true');
    // The export stands at its request; the requests since may have appended bookkeeping (token use).
    expect(lines.map((l) => (JSON.parse(l) as Entry).position)).toEqual(
      log.slice(0, lines.length).map((e) => e.position),
    );
    expect(lines.length).toBeGreaterThanOrEqual(log.length - 5);
    expect(result.stdout).toBe(`Wrote ${lines.length} events to ${file}\n`);
    expect(result.stderr).toMatch(new RegExp(`bic: ${lines.length} events written, \\d+ events/s`));
    expect(existsSync(`${file}.part`)).toBe(false);

    const again = await runCli(['audit', 'events', '--ndjson', file], staffEnv);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('already exists');

    const limited = path.join(dir, 'limited.ndjson');
    const some = await runCli(
      ['audit', 'events', '--type', 'CategoryCreated', '--limit', '3', '--ndjson', limited],
      staffEnv,
    );
    expect(some.code).toBe(0);
    expect(readFileSync(limited, 'utf8').split('\n').filter(Boolean)).toHaveLength(3);

    writeFileSync(file, 'old');
    const forced = await runCli(
      ['audit', 'events', '--type', 'CategoryCreated', '--ndjson', file, '--force'],
      staffEnv,
    );
    expect(forced.code).toBe(0);
    expect(readFileSync(file, 'utf8').split('\n').filter(Boolean).length).toBeGreaterThanOrEqual(6);
  });

  test("a bad filter: exit 6 with the server's message; not staff: exit 4", async () => {
    const bad = await runCli(['audit', 'events', '--actor', 'nobody'], staffEnv);
    expect(bad.code).toBe(6);
    expect(bad.stderr).toMatch(/invalid request \(400\): actor: Enter a user id/);
    const badExport = await runCli(
      [
        'audit',
        'events',
        '--since',
        'yesterday',
        '--ndjson',
        path.join(scratchDir('bic-audit-'), 'x.ndjson'),
      ],
      staffEnv,
    );
    expect(badExport.code).toBe(6);
    expect(badExport.stderr).toContain('since');
    const forbidden = await runCli(['audit', 'events'], user.env);
    expect(forbidden.code).toBe(4);
    const usage = await runCli(['audit', 'events', '--limit', 'many'], staffEnv);
    expect(usage.code).toBe(2);
  });
});
