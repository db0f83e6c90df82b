import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { scratchDir } from '#tests/support/scratchDir';
import { niftiBytes } from '#tests/e2e/brains/brainFixtures';
import { ConfigStore } from '#cli/config/configStore';
import { type CliUser, type CliWorld, loggedInUser, startCliWorld, stopCliWorld } from './cliService';
import { cliEnv, freshConfigDir, runCli } from './runCli';

/*
 * `bic brains create --private | --embargo-until`, `share`, `unshare`, `collaborators`,
 * `visibility` and `list --visibility` against the real all-in-one (decisions.md "Visibility and
 * collaborators"): what each user of the CLI then sees, and the lines and exit codes of refusals.
 */

let world: CliWorld;
let owner: CliUser;
let friend: CliUser;
let stranger: CliUser;
let anonymous: Record<string, string>;
let scan: string;

beforeAll(async () => {
  world = await startCliWorld();
  [owner, friend, stranger] = await Promise.all([
    loggedInUser(world),
    loggedInUser(world),
    loggedInUser(world),
  ]);
  anonymous = cliEnv(world.service.url, freshConfigDir());
  scan = path.join(scratchDir('bic-scan-'), 'mouse.nii');
  writeFileSync(scan, niftiBytes());
}, 120_000);

afterAll(() => stopCliWorld(world));

interface Created {
  id: number;
  readable_id: string;
  visibility: string;
  embargo_until: string | null;
}

async function create(name: string, ...flags: string[]): Promise<Created> {
  const atlas = String(world.taxonomy.atlas.id);
  const result = await runCli(
    ['brains', 'create', '--name', name, '--atlas', atlas, '--file', scan, '--json', ...flags],
    owner.env,
  );
  if (result.code !== 0) throw new Error(`brains create: ${result.code} ${result.stderr}`);
  return JSON.parse(result.stdout) as Created;
}

/*
 * What a user then sees is read over HTTP with the token their `bic login` stored (a CLI run costs a
 * second or two of start-up); the commands under test are run through bic.
 */
async function tokenOf(env: Record<string, string>): Promise<string | undefined> {
  return env === anonymous ? undefined : (await new ConfigStore(env.BIC_CONFIG_DIR!).read()).token;
}

const listedIds = async (env: Record<string, string>, ...flags: string[]): Promise<number[]> => {
  const query = new URLSearchParams({ atlas: world.taxonomy.atlas.slug });
  if (flags[0] === '--visibility') query.set('visibility', flags[1]!);
  const token = await tokenOf(env);
  const listed = await world.api.get(`/api/brains/?${query.toString()}`, token ? { token } : {});
  if (listed.status !== 200) throw new Error(`brains list: ${listed.status} ${listed.text}`);
  return (listed.body as { id: number }[]).map((b) => b.id);
};

/** The exit code `bic brains show` gives for the answer the user gets (0 or 5: not found). */
const shows = async (env: Record<string, string>, key: string | number) => {
  const token = await tokenOf(env);
  const res = await world.api.get(`/api/brains/${key}/`, token ? { token } : {});
  if (res.status !== 200 && res.status !== 404) throw new Error(`brain ${key}: ${res.status} ${res.text}`);
  return res.status === 200 ? 0 : 5;
};

describe('bic brains create with a visibility', () => {
  it('--private: only its uploader sees it; anonymous and other users get "not found"', async () => {
    const brain = await create('Private cortex', '--private');
    expect(brain).toMatchObject({ visibility: 'private', embargo_until: null });

    expect(await shows(owner.env, brain.readable_id)).toBe(0);
    expect(await runCli(['brains', 'show', brain.readable_id], anonymous)).toMatchObject({
      code: 5,
      stdout: '',
      stderr: expect.stringMatching(/^bic: not found: /),
    });
    expect(await shows(stranger.env, brain.id)).toBe(5);
    expect(await listedIds(owner.env)).toContain(brain.id);
    expect(await listedIds(anonymous)).not.toContain(brain.id);
    expect(await listedIds(stranger.env)).not.toContain(brain.id);
  });

  it('--embargo-until a date: embargoed until its midnight UTC; the plain line says so', async () => {
    const atlas = String(world.taxonomy.atlas.id);
    const result = await runCli(
      [
        'brains',
        'create',
        '--name',
        'Embargoed',
        '--atlas',
        atlas,
        '--file',
        scan,
        '--embargo-until',
        '2099-01-31',
      ],
      owner.env,
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^Created brain \d+ \(\S+\), embargoed until 2099-01-31T00:00:00(\.000)?Z\n$/,
    );
    const id = /^Created brain (\d+)/.exec(result.stdout)![1]!;
    expect(await shows(anonymous, id)).toBe(5);

    const shown = JSON.parse((await runCli(['brains', 'show', id, '--json'], owner.env)).stdout);
    expect(shown).toMatchObject({ visibility: 'embargoed' });
    expect(Date.parse(shown.embargo_until)).toBe(Date.parse('2099-01-31T00:00:00Z'));
  });

  it('refuses both flags, a bad date, and an embargo in the past (the server: 400 on embargo_until)', async () => {
    const atlas = String(world.taxonomy.atlas.id);
    const base = ['brains', 'create', '--name', 'x', '--atlas', atlas, '--file', scan];
    const [both, badDate, past] = await Promise.all([
      runCli([...base, '--private', '--embargo-until', '2099-01-01'], owner.env),
      runCli([...base, '--embargo-until', 'next tuesday'], owner.env),
      runCli([...base, '--embargo-until', '2001-01-01'], owner.env),
    ]);
    expect(both).toMatchObject({ code: 2, stderr: 'bic: give --private or --embargo-until, not both\n' });
    expect(badDate.code).toBe(2);
    expect(badDate.stderr).toContain('--embargo-until');

    expect(past.code).toBe(6);
    expect(past.stderr).toMatch(/^bic: invalid request \(400\): .*embargo_until: /);
  });
});

describe('bic brains share, collaborators, unshare', () => {
  it('a viewer sees the brain until unshared; the owner lists collaborators and changes roles', async () => {
    const brain = await create('Shared hippocampus', '--private');
    expect(await shows(friend.env, brain.id)).toBe(5);

    const shared = await runCli(
      ['brains', 'share', brain.readable_id, friend.username, '--role', 'viewer'],
      owner.env,
    );
    expect(shared).toMatchObject({
      code: 0,
      stdout: `Brain ${brain.readable_id}: shared with ${friend.username} (user ${friend.id}) as viewer\n`,
    });
    expect(await shows(friend.env, brain.readable_id)).toBe(0);
    expect(await listedIds(friend.env)).toContain(brain.id);
    expect(await shows(stranger.env, brain.id)).toBe(5);

    // A viewer may look at the collaborators, not change the brain's visibility.
    const seen = await runCli(['brains', 'collaborators', String(brain.id), '--json'], friend.env);
    expect(seen.code).toBe(0);
    expect(JSON.parse(seen.stdout)).toEqual([
      expect.objectContaining({
        user: expect.objectContaining({ id: friend.id, username: friend.username }),
        role: 'viewer',
      }),
    ]);
    const refused = await runCli(['brains', 'visibility', String(brain.id), 'public'], friend.env);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/^bic: forbidden: /);

    // Shared again by e-mail: the role changes (200), one collaborator still.
    const promoted = await runCli(
      ['brains', 'share', String(brain.id), friend.email, '--role', 'editor'],
      owner.env,
    );
    expect(promoted).toMatchObject({
      code: 0,
      stdout: `Brain ${brain.id}: role changed for ${friend.username} (user ${friend.id}) as editor\n`,
    });
    const table = await runCli(['brains', 'collaborators', brain.readable_id], owner.env);
    expect(table.code).toBe(0);
    const rows = table.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^USER ID\s+USERNAME\s+ROLE\s+ADDED$/);
    expect(rows.slice(1)).toEqual([
      expect.stringMatching(new RegExp(`^${friend.id}\\s+${friend.username}\\s+editor\\s+\\d{4}-`)),
    ]);

    // An editor changes what the brain says, and may not share it on.
    const reshare = await runCli(
      ['brains', 'share', String(brain.id), stranger.username, '--role', 'viewer'],
      friend.env,
    );
    expect(reshare.code).toBe(4);

    const gone = await runCli(['brains', 'unshare', brain.readable_id, friend.username], owner.env);
    expect(gone).toMatchObject({
      code: 0,
      stdout: `Brain ${brain.readable_id}: no longer shared with ${friend.username}\n`,
    });
    expect(await shows(friend.env, brain.id)).toBe(5);
    expect(await listedIds(friend.env)).not.toContain(brain.id);
    const none = await runCli(['brains', 'collaborators', String(brain.id)], owner.env);
    expect(none).toMatchObject({ code: 0, stdout: `(brain ${brain.id} has no collaborators)\n` });
  });

  it('unshare by user id; unknown users and non-collaborators are refused clearly', async () => {
    const brain = await create('Shared by id', '--private');
    await runCli(['brains', 'share', String(brain.id), friend.username, '--role', 'viewer'], owner.env);
    const byId = await runCli(['brains', 'unshare', String(brain.id), String(friend.id)], owner.env);
    expect(byId.code).toBe(0);
    expect(await shows(friend.env, brain.id)).toBe(5);

    const notOne = await runCli(['brains', 'unshare', String(brain.id), stranger.username], owner.env);
    expect(notOne).toMatchObject({
      code: 5,
      stderr: `bic: not found: ${stranger.username} is not a collaborator of brain ${brain.id}\n`,
    });
    const unknown = await runCli(
      ['brains', 'share', String(brain.id), 'nobody-at-all', '--role', 'viewer'],
      owner.env,
    );
    expect(unknown.code).toBe(6);
    expect(unknown.stderr).toMatch(/^bic: invalid request \(400\): user: /);

    const badRole = await runCli(
      ['brains', 'share', String(brain.id), friend.username, '--role', 'owner'],
      owner.env,
    );
    expect(badRole.code).toBe(2);

    // Someone who does not see the brain gets what a missing brain gets.
    const outsider = await runCli(
      ['brains', 'share', String(brain.id), stranger.username, '--role', 'viewer'],
      stranger.env,
    );
    expect(outsider.code).toBe(5);
    expect(await runCli(['brains', 'collaborators', String(brain.id)], anonymous)).toMatchObject({ code: 5 });
  });
});

describe('bic brains visibility and list --visibility', () => {
  it('private → public → embargoed: each change seen by anonymous as the rule says', async () => {
    const brain = await create('Changing', '--private');
    const toPublic = await runCli(['brains', 'visibility', brain.readable_id, 'public'], owner.env);
    expect(toPublic).toMatchObject({
      code: 0,
      stdout: `Brain ${brain.id} (${brain.readable_id}) is public\n`,
    });
    expect(await shows(anonymous, brain.id)).toBe(0);

    const noDate = await runCli(['brains', 'visibility', String(brain.id), 'embargoed'], owner.env);
    expect(noDate).toMatchObject({ code: 2, stderr: 'bic: embargoed needs --until <date>\n' });
    const dateOnPublic = await runCli(
      ['brains', 'visibility', String(brain.id), 'public', '--until', '2099-01-01'],
      owner.env,
    );
    expect(dateOnPublic.code).toBe(2);
    const unknown = await runCli(['brains', 'visibility', String(brain.id), 'secret'], owner.env);
    expect(unknown.code).toBe(2);

    const embargoed = await runCli(
      ['brains', 'visibility', String(brain.id), 'embargoed', '--until', '2099-06-30T12:00:00Z', '--json'],
      owner.env,
    );
    expect(embargoed.code).toBe(0);
    const body = JSON.parse(embargoed.stdout);
    expect(body.visibility).toBe('embargoed');
    expect(Date.parse(body.embargo_until)).toBe(Date.parse('2099-06-30T12:00:00Z'));
    expect(await shows(anonymous, brain.id)).toBe(5);
  });

  it('--visibility filters the list; the table shows a visibility column when a row is not public', async () => {
    const privateOne = await create('Filter private', '--private');
    const publicOne = await create('Filter public');
    expect(publicOne.visibility).toBe('public');

    const onlyPrivate = await listedIds(owner.env, '--visibility', 'private');
    expect(onlyPrivate).toContain(privateOne.id);
    expect(onlyPrivate).not.toContain(publicOne.id);
    expect(await listedIds(owner.env, '--visibility', 'public')).toContain(publicOne.id);
    expect(await listedIds(anonymous, '--visibility', 'private')).toEqual([]);

    const table = await runCli(['brains', 'list', '--visibility', 'private'], owner.env);
    const rows = table.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^ID\s+READABLE ID\s+NAME\s+VISIBILITY\s+ATLAS\s+/);
    expect(rows.find((r) => r.startsWith(`${privateOne.id} `))).toMatch(/\sprivate\s/);

    const publicTable = await runCli(['brains', 'list', '--visibility', 'public'], anonymous);
    expect(publicTable.stdout.split('\n')[0]).not.toContain('VISIBILITY');

    const bad = await runCli(['brains', 'list', '--visibility', 'hidden'], owner.env);
    expect(bad.code).toBe(2);
  });
});
