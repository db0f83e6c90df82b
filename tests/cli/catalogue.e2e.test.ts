import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { scratchDir } from '#tests/support/scratchDir';
import { niftiBytes } from '#tests/e2e/brains/brainFixtures';
import { type CliUser, type CliWorld, loggedInUser, startCliWorld } from './cliService';
import { cliEnv, freshConfigDir, runCli } from './runCli';

let world: CliWorld;
let user: CliUser;
let scan: string;
const created: { id: number; readable_id: string }[] = [];

beforeAll(async () => {
  world = await startCliWorld();
  user = await loggedInUser(world);
  scan = path.join(scratchDir('bic-scan-'), 'mouse.nii');
  writeFileSync(scan, niftiBytes());
  for (const name of ['Cortex sample', 'Hippocampus sample']) {
    const create = await runCli(
      [
        'brains',
        'create',
        '--name',
        name,
        '--atlas',
        String(world.taxonomy.atlas.id),
        '--file',
        scan,
        '--json',
      ],
      user.env,
    );
    if (create.code !== 0) throw new Error(`brains create: ${create.code} ${create.stderr}`);
    created.push(JSON.parse(create.stdout));
  }
});

afterAll(async () => {
  await world?.service.close();
});

const rowsOf = (stdout: string) => stdout.trim().split('\n');

describe('catalogue lists', () => {
  it('categories, species and atlases as tables, filtered, and as JSON', async () => {
    const { category, species, atlas } = world.taxonomy;
    const categories = await runCli(['categories', 'list', '--name', category.name], user.env);
    expect(categories.code).toBe(0);
    expect(rowsOf(categories.stdout)[0]).toMatch(/^ID\s+NAME\s+BRAINS\s+ATLASES\s+DESCRIPTION$/);
    expect(rowsOf(categories.stdout)).toHaveLength(2);
    expect(rowsOf(categories.stdout)[1]).toMatch(
      new RegExp(`^${category.id}\\s+${category.name}\\s+2\\s+1\\b`),
    );

    const speciesList = await runCli(['species', 'list', '--category', category.name, '--json'], user.env);
    expect(speciesList.code).toBe(0);
    expect(JSON.parse(speciesList.stdout)).toEqual([expect.objectContaining({ id: species.id })]);

    const atlases = await runCli(['atlases', 'list', '--species', String(species.id)], user.env);
    expect(rowsOf(atlases.stdout)).toHaveLength(2);
    expect(rowsOf(atlases.stdout)[1]).toContain(atlas.slug);
  });

  it('brains list with filters, --search and pages', async () => {
    const byAtlas = await runCli(['brains', 'list', '--atlas', world.taxonomy.atlas.slug], user.env);
    expect(byAtlas.code).toBe(0);
    const rows = rowsOf(byAtlas.stdout);
    expect(rows[0]).toMatch(/^ID\s+READABLE ID\s+NAME\s+ATLAS\s+SPECIES\s+VERIFIED\s+MB\s+UPLOADED$/);
    expect(rows.slice(1).map((r) => r.split(/\s{2,}/)[1])).toEqual(
      created.map((b) => b.readable_id).reverse(),
    );

    const searched = await runCli(['brains', 'list', '--search', 'hippocampus', '--json'], user.env);
    expect(JSON.parse(searched.stdout).map((b: { id: number }) => b.id)).toEqual([created[1]!.id]);

    const page = await runCli(
      ['brains', 'list', '--atlas', world.taxonomy.atlas.slug, '--page', '2', '--page-size', '1'],
      user.env,
    );
    expect(page.code).toBe(0);
    expect(rowsOf(page.stdout)).toEqual([
      expect.stringMatching(/^ID/),
      expect.stringContaining(created[0]!.readable_id),
      'page 2 of 2, 2 in all',
    ]);

    const beyond = await runCli(['brains', 'list', '--page', '99'], user.env);
    expect(beyond).toMatchObject({ code: 5, stderr: 'bic: not found: Invalid page.\n' });

    const badFilter = await runCli(['brains', 'list', '--verified', 'maybe'], user.env);
    expect(badFilter.code).toBe(2);
  });

  it('lists need no login', async () => {
    const anonymous = await runCli(['brains', 'list', '--json'], cliEnv(world.service.url, freshConfigDir()));
    expect(anonymous.code).toBe(0);
    expect(JSON.parse(anonymous.stdout).length).toBeGreaterThanOrEqual(2);
  });
});

describe('bic brains show and create', () => {
  it('shows a brain by readable id as fields, and by id as JSON', async () => {
    const [first] = created;
    const shown = await runCli(['brains', 'show', first!.readable_id], user.env);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^id\\s+${first!.id}$`, 'm'));
    expect(shown.stdout).toMatch(new RegExp(`^atlas\\.slug\\s+${world.taxonomy.atlas.slug}$`, 'm'));
    expect(shown.stdout).toMatch(new RegExp(`^uploader\\.email\\s+${user.email}$`, 'm'));

    const json = await runCli(['brains', 'show', String(first!.id), '--json'], user.env);
    expect(JSON.parse(json.stdout)).toMatchObject({ id: first!.id, readable_id: first!.readable_id });
  });

  it('a missing brain is 404: one line, exit code 5', async () => {
    const missing = await runCli(['brains', 'show', 'no-such-brain'], user.env);
    expect(missing).toMatchObject({ code: 5, stdout: '', stderr: 'bic: not found: Not found.\n' });
  });

  it('a field the server refuses: the field and its message, exit code 6', async () => {
    const refused = await runCli(
      [
        'brains',
        'create',
        '--name',
        'x',
        '--atlas',
        String(world.taxonomy.atlas.id),
        '--color',
        'blue',
        '--file',
        scan,
      ],
      user.env,
    );
    expect(refused.code).toBe(6);
    expect(refused.stderr).toMatch(/^bic: invalid request \(400\): color: .+\n$/);
  });

  it('creating needs a login (exit code 3) and a readable file (exit code 1)', async () => {
    const args = ['brains', 'create', '--name', 'x', '--atlas', String(world.taxonomy.atlas.id), '--file'];
    const anonymous = await runCli([...args, scan], cliEnv(world.service.url, freshConfigDir()));
    expect(anonymous.code).toBe(3);
    const missingFile = await runCli([...args, '/nonexistent/scan.nii'], user.env);
    expect(missingFile.code).toBe(1);
    expect(missingFile.stderr).toMatch(/^bic: cannot read \/nonexistent\/scan.nii: .+\n$/);
  });
});
