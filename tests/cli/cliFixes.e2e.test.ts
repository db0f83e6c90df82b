import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { scratchDir } from '#tests/support/scratchDir';
import { niftiBytes } from '#tests/e2e/brains/brainFixtures';
import { type CliUser, type CliWorld, loggedInUser, startCliWorld, stopCliWorld } from './cliService';
import { cliEnv, freshConfigDir, runCli } from './runCli';

let world: CliWorld;
let user: CliUser;
let dir: string;
let brain: { id: number; readable_id: string };

beforeAll(async () => {
  world = await startCliWorld({}, { processor: true });
  user = await loggedInUser(world);
  dir = scratchDir('bic-fixes-');
  writeFileSync(path.join(dir, 'mouse.nii'), niftiBytes());
  const longName = `A brain with a name far too long for one column of an 80-column terminal ${process.pid}`;
  const created = await runCli(
    [
      'brains',
      'create',
      '--name',
      longName,
      '--atlas',
      String(world.taxonomy.atlas.id),
      '--file',
      'mouse.nii',
      '--wait',
      '--json',
    ],
    user.env,
    { cwd: dir, timeoutMs: 120_000 },
  );
  if (created.code !== 0) throw new Error(`brains create: ${created.stderr}`);
  // --wait --json prints the processed upload: the brain is found by its name.
  const listed = await runCli(['brains', 'list', '--json'], user.env);
  const brains = JSON.parse(listed.stdout) as { id: number; readable_id: string; name: string }[];
  brain = brains.find((b) => b.name === longName) ?? { id: 0, readable_id: 'missing' };
});

afterAll(async () => {
  await stopCliWorld(world);
});

const bic = (args: string[], extra: Record<string, string> = {}) =>
  runCli(args, { ...user.env, ...extra }, { cwd: dir, timeoutMs: 60_000 });

describe('bic register', () => {
  it('creates the account (password on stdin) and, with --login, stores a token that works', async () => {
    const configDir = freshConfigDir();
    const env = cliEnv(world.service.url, configDir);
    const n = `${process.pid}${Date.now().toString(36)}`;
    const registered = await runCli(
      [
        'register',
        '--email',
        `reg${n}@example.org`,
        '--username',
        `reg${n}`,
        '--first-name',
        'Ada',
        '--last-name',
        'Lovelace',
        '--password-stdin',
        '--login',
      ],
      env,
      { input: 'a good long password\n' },
    );
    expect(registered.code).toBe(0);
    expect(registered.stdout).toMatch(
      new RegExp(`^Registered reg${n} <reg${n}@example\\.org> \\(user \\d+\\) on `),
    );
    expect(registered.stdout).toMatch(new RegExp(`Logged in to .+ as reg${n}; token "bic on .+" stored`));

    const me = await runCli(['whoami'], env);
    expect(me.code).toBe(0);
    expect(me.stdout).toContain(`reg${n} <reg${n}@example.org>`);
  });

  it('a refused registration names the field (exit 6); without a terminal it says what to pass (exit 2)', async () => {
    const env = cliEnv(world.service.url, freshConfigDir());
    const taken = await runCli(
      [
        'register',
        '--email',
        user.email,
        '--username',
        `other${process.pid}`,
        '--first-name',
        'A',
        '--last-name',
        'B',
        '--password-stdin',
      ],
      env,
      { input: 'a good long password' },
    );
    expect(taken.code).toBe(6);
    expect(taken.stderr).toMatch(/^bic: invalid request \(400\): .*email: .+\n$/);

    const short = await runCli(
      [
        'register',
        '--email',
        `s${process.pid}@example.org`,
        '--username',
        `s${process.pid}`,
        '--first-name',
        'A',
        '--last-name',
        'B',
        '--password-stdin',
      ],
      env,
      { input: 'short' },
    );
    expect(short.code).toBe(6);
    expect(short.stderr).toMatch(/password/);

    const noTerminal = await runCli(['register', '--email', `t${process.pid}@example.org`], env);
    expect(noTerminal.code).toBe(2);
    expect(noTerminal.stderr).toMatch(
      /^bic: no terminal to ask "Username" on: pass --email, --username, --first-name, --last-name and --password-stdin\n$/,
    );
  });
});

describe('bic brains list --facets', () => {
  it('prints the counts per species and atlas under the table', async () => {
    const listed = await bic(['brains', 'list', '--facets', 'species,atlas,verified']);
    expect(listed.code).toBe(0);
    const species = world.taxonomy.species as unknown as { id: number; name: string };
    expect(listed.stdout).toMatch(new RegExp(`^SPECIES\\s+COUNT$`, 'm'));
    expect(listed.stdout).toMatch(new RegExp(`^${escape(species.name)} \\(id ${species.id}\\)\\s+1$`, 'm'));
    expect(listed.stdout).toMatch(/^ATLAS\s+COUNT$/m);
    expect(listed.stdout).toMatch(/^VERIFIED\s+COUNT$/m);
    expect(listed.stdout).toMatch(/^false\s+1$/m);
    expect(listed.stdout).toMatch(/^page 1 of 1, 1 in all$/m);

    const json = await bic(['brains', 'list', '--facets', 'species', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      count: 1,
      facets: { species: [{ id: species.id, count: 1 }] },
    });
  });

  it('an unknown facet name is a usage error (exit 2)', async () => {
    const listed = await bic(['brains', 'list', '--facets', 'colour']);
    expect(listed.code).toBe(2);
    expect(listed.stderr).toContain('comma-separated names among species, atlas, category, verified');
  });
});

describe('a filter naming a species, atlas or category that does not exist', () => {
  it.each([
    [['brains', 'list', '--species', 'Nonexistent animal'], 'no species "Nonexistent animal"'],
    [['brains', 'list', '--atlas', 'no-such-atlas'], 'no atlas "no-such-atlas"'],
    [['brains', 'list', '--atlas', '999999'], 'no atlas "999999"'],
    [['brains', 'list', '--category', 'nocategory'], 'no category "nocategory"'],
    [['atlases', 'list', '--species', 'Nonexistent animal'], 'no species "Nonexistent animal"'],
    [['species', 'list', '--category', 'nocategory'], 'no category "nocategory"'],
  ])('%j fails naming it (exit 5), not an empty list', async (args, message) => {
    const listed = await bic(args);
    expect(listed.code).toBe(5);
    expect(listed.stdout).toBe('');
    expect(listed.stderr).toContain(`bic: ${message} on ${world.service.url}`);
  });

  it('a filter that exists but matches nothing is still an empty list (exit 0)', async () => {
    const species = world.taxonomy.species as { scientific_name: string };
    const listed = await bic(['brains', 'list', '--species', species.scientific_name, '--verified', 'true']);
    expect(listed.code).toBe(0);
    expect(listed.stdout.trim()).toMatch(/^ID\s+READABLE ID\s+NAME/);
  });
});

describe('bic brains preview', () => {
  it('saves the PNG preview of a processed brain', async () => {
    const out = path.join(dir, 'preview.png');
    const saved = await bic(['brains', 'preview', brain.readable_id, '-o', out]);
    expect(saved.stderr).toBe('');
    expect(saved.code).toBe(0);
    expect(saved.stdout).toMatch(/^Saved .+preview\.png \(\d+ bytes, PNG\)\n$/);
    expect(readFileSync(out).subarray(0, 8)).toEqual(
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    );

    const again = await bic(['brains', 'preview', brain.readable_id, '-o', out]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already exists (--force to overwrite)');
    const missing = await bic(['brains', 'preview', 'no-such-brain', '-o', path.join(dir, 'x.png')]);
    expect(missing.code).toBe(5);
  });
});

describe('tables on an 80-column terminal', () => {
  it('every line of the brains list fits 80 columns; long cells end with …; --json is whole', async () => {
    const listed = await bic(['brains', 'list'], { COLUMNS: '80' });
    expect(listed.code).toBe(0);
    for (const line of listed.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    expect(listed.stdout).toMatch(/^ID\s+READABLE ID\s+NAME\s+/);
    expect(listed.stdout).toContain('A brain with a nam');
    expect(listed.stdout).toContain('…');

    const wide = await bic(['brains', 'list'], { COLUMNS: '200' });
    expect(wide.stdout).toMatch(/UPLOADED/);

    const shown = await bic(['brains', 'show', brain.readable_id], { COLUMNS: '80' });
    for (const line of shown.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  });
});

describe('bic outside the checkout', () => {
  it('runs from another directory, even one with a tsconfig.json of its own (as after npm link)', async () => {
    const elsewhere = scratchDir('bic-elsewhere-');
    mkdirSync(path.join(elsewhere, 'src'));
    writeFileSync(
      path.join(elsewhere, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'esnext', paths: { '#cli/*': ['src/*'] } } }),
    );
    const version = JSON.parse(readFileSync(path.join(__dirname, '../../package.json'), 'utf8')) as {
      version: string;
    };
    const run = await runCli(['--version'], user.env, { cwd: elsewhere });
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(version.version);
    const listed = await runCli(['categories', 'list'], user.env, { cwd: elsewhere });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^ID\s+NAME/);
  });
});

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
