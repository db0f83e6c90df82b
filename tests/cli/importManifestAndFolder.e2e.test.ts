import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { niftiBytes, tiffBytes } from '#tests/e2e/brains/brainFixtures';
import { scratchDir } from '#tests/support/scratchDir';
import { type CliUser, type CliWorld, loggedInUser, startCliWorld, stopCliWorld } from './cliService';
import { startInterceptingProxy } from './interceptingProxy';
import { runCli } from './runCli';

interface Brain {
  id: number;
  name: string;
  description: string;
  color: string;
  is_reference: boolean;
  visibility: string;
  embargo_until: string | null;
  extra_link: string;
  atlas: { id: number } | null;
  species: { scientific_name: string } | null;
}

const ROWS = 200;
const BAD_ROW = 136; // n % 4 === 0: a row with a colour

let world: CliWorld;

beforeAll(async () => {
  world = await startCliWorld({ RATE_LIMIT_UPLOAD: '100000/hour' });
});

afterAll(async () => {
  await stopCliWorld(world);
});

const tokenOf = (user: CliUser): string =>
  (JSON.parse(readFileSync(path.join(user.configDir, 'config.json'), 'utf8')) as { token: string }).token;

async function brainsOf(user: CliUser): Promise<Brain[]> {
  const list = await world.api.get(`/api/brains/?uploader=${user.id}&shape=a`, { token: tokenOf(user) });
  expect(list.status).toBe(200);
  return list.body as Brain[];
}

/** A NIfTI of its own bytes (the voxel values differ), so every file has another SHA-256. */
function niftiNumbered(n: number): Buffer {
  const bytes = niftiBytes();
  bytes.writeUInt8(n % 256, bytes.length - 1);
  bytes.writeUInt8(Math.floor(n / 256), bytes.length - 2);
  return bytes;
}

describe('bic import --manifest', () => {
  let user: CliUser;
  let dir: string;
  let proxy: Awaited<ReturnType<typeof startInterceptingProxy>>;
  let env: Record<string, string>;
  const line = (n: number, color: string) => {
    const { atlas, category } = world.taxonomy;
    const common = `scans/brain-${n}.nii`;
    if (n % 4 === 0)
      return `${common},Brain ${n},${atlas.slug},,Row ${n},true,private,,https://example.org/${n},,${color}`;
    if (n % 4 === 1) return `${common},Brain ${n},${atlas.id},,,false,,2031-01-31,,,`;
    if (n % 4 === 2) return `${common},Brain ${n},,${category.name},"Row ${n}, quoted",,public,,,,`;
    return `${common},,,${category.id},,,,,,,`;
  };
  const manifest = (badColor: string) =>
    [
      'file,name,atlas,category,description,is_reference,visibility,embargo_until,extra_link,website,color',
      ...Array.from({ length: ROWS }, (_, i) => line(i + 1, i + 1 === BAD_ROW ? badColor : '#AbC')),
    ].join('\n');

  beforeAll(async () => {
    user = await loggedInUser(world);
    proxy = await startInterceptingProxy(world.service.url, () => undefined);
    env = { ...user.env, BIC_SERVER: proxy.url, BIC_TOKEN: tokenOf(user) };
    dir = scratchDir('bic-manifest-');
    mkdirSync(path.join(dir, 'scans'));
    for (let n = 1; n <= ROWS; n++)
      writeFileSync(path.join(dir, 'scans', `brain-${n}.nii`), niftiNumbered(n));
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it('a 200-row manifest with one bad row: that row listed (line, column, message), nothing sent, exit 6', async () => {
    // Row BAD_ROW is on line BAD_ROW + 1 (the header is line 1); n % 4 === 0 rows carry a colour.
    writeFileSync(path.join(dir, 'brains.csv'), manifest('#12345'));
    const before = proxy.seen.length;
    const run = await runCli(['import', '--manifest', path.join(dir, 'brains.csv')], env);
    expect(run.code).toBe(6);
    expect(run.stderr.trim().split('\n')).toEqual([
      `bic: row ${BAD_ROW + 1}, color: not a colour (#rrggbb or #rgb)`,
      'bic: 1 problem in the manifest (listed above): nothing was sent',
    ]);
    expect(proxy.seen.slice(before).filter((r) => r.method !== 'GET')).toEqual([]);
    expect(await brainsOf(user)).toEqual([]);
  });

  it('fixed, it imports all 200 rows with their fields; run again, it sends nothing', async () => {
    writeFileSync(path.join(dir, 'brains.csv'), manifest('#0f0'));
    const run = await runCli(['import', 'brains.csv', '--jobs', '6'], env, { cwd: dir, timeoutMs: 300_000 });
    expect({ code: run.code, stderr: run.stderr.split('\n').filter((l) => !l.includes(' files, ')) }).toEqual(
      {
        code: 0,
        stderr: [''],
      },
    );
    expect(run.stdout).toMatch(/^created\s+200\s/m);
    expect(run.stdout).toMatch(/^failed\s+0\s/m);

    const brains = await brainsOf(user);
    expect(brains).toHaveLength(ROWS);
    const byName = new Map(brains.map((b) => [b.name, b]));
    expect(byName.get('Brain 4')).toMatchObject({
      description: 'Row 4',
      is_reference: true,
      visibility: 'private',
      color: '#aabbcc',
      atlas: { id: world.taxonomy.atlas.id },
    });
    const shapeB = await world.api.get(`/api/brains/${byName.get('Brain 4')!.id}/`, { token: tokenOf(user) });
    expect(shapeB.body).toMatchObject({ extra_link: 'https://example.org/4', website: '' });
    expect(byName.get(`Brain ${BAD_ROW}`)).toMatchObject({ color: '#00ff00' }); // the fixed row
    expect(byName.get('Brain 5')).toMatchObject({
      visibility: 'embargoed',
      embargo_until: '2031-01-31T00:00:00.000Z',
      is_reference: false,
      atlas: { id: world.taxonomy.atlas.id },
    });
    expect(byName.get('Brain 6')).toMatchObject({
      description: 'Row 6, quoted',
      visibility: 'public',
      atlas: null,
    });
    expect(byName.get('brain-7')).toMatchObject({ atlas: null, visibility: 'public' }); // name from the file

    const before = proxy.seen.length;
    const again = await runCli(['import', 'brains.csv'], env, { cwd: dir });
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^skipped \(already there\)\s+200\s/m);
    expect(proxy.seen.slice(before).filter((r) => r.method !== 'GET')).toEqual([]);
    expect(await brainsOf(user)).toHaveLength(ROWS);
  }, 300_000);
});

describe('bic import of a folder', () => {
  it('--category: one brain per supported file (any case, nested), named after it; unsupported files ignored', async () => {
    const user = await loggedInUser(world);
    const dir = scratchDir('bic-folder-');
    mkdirSync(path.join(dir, 'mouse', 'deep'), { recursive: true });
    writeFileSync(path.join(dir, 'Cortex.NII'), niftiNumbered(1));
    writeFileSync(path.join(dir, 'mouse', 'hippocampus.nii.gz'), gzipSync(niftiNumbered(2)));
    writeFileSync(path.join(dir, 'mouse', 'deep', 'slice.tif'), tiffBytes());
    writeFileSync(path.join(dir, 'mouse', 'notes.txt'), 'not a scan');

    const unknown = await runCli(['import', dir, '--category', 'no-such-category'], user.env);
    expect(unknown.code).toBe(6);
    expect(unknown.stderr).toBe(
      'bic: --category: no category no-such-category\nbic: 1 problem in the folder (listed above): nothing was sent\n',
    );

    const dry = await runCli(
      ['import', dir, '--category', world.taxonomy.category.name, '--dry-run'],
      user.env,
    );
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^3 scans, .* \(folder; dry run: nothing sent\)$/m);
    expect(await brainsOf(user)).toEqual([]);

    const run = await runCli(
      ['import', dir, '--category', world.taxonomy.category.name, '--private'],
      user.env,
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^created\s+3\s/m);
    const brains = await brainsOf(user);
    expect(brains.map((b) => b.name).sort()).toEqual(['Cortex', 'hippocampus', 'slice']);
    for (const brain of brains) expect(brain).toMatchObject({ atlas: null, visibility: 'private' });

    const flat = await runCli(
      ['import', dir, '--category', String(world.taxonomy.category.id), '--no-recursive', '--json'],
      user.env,
    );
    expect(flat.code).toBe(0);
    expect(
      (JSON.parse(flat.stdout) as { file: string; status: string }[]).map((o) => [o.file, o.status]),
    ).toEqual([['Cortex.NII', 'skipped']]);
  });

  it('a failure of the server is reported per file, the others go on, exit non-zero listing it', async () => {
    const user = await loggedInUser(world);
    const dir = scratchDir('bic-folder-fail-');
    writeFileSync(path.join(dir, 'good.nii'), niftiNumbered(3));
    writeFileSync(path.join(dir, 'refused.nii'), niftiNumbered(4));
    // The server refuses one create: a name over 200 characters is a 400 on name, in the API's words.
    writeFileSync(path.join(dir, `${'x'.repeat(210)}.nii`), niftiNumbered(5));
    const run = await runCli(['import', dir, '--category', world.taxonomy.category.name], user.env);
    expect(run.code).toBe(6);
    expect(run.stdout).toMatch(/^created\s+2\s/m);
    expect(run.stdout).toMatch(/^failed\s+1\s/m);
    const lines = run.stderr.trim().split('\n');
    expect(lines.at(-2)).toMatch(
      new RegExp(`^bic: failed: x{210}\\.nii: invalid request \\(400\\): name: .+`),
    );
    expect(lines.at(-1)).toBe(
      'bic: 1 of 3 scans failed (listed above); run the same import again to retry them',
    );
    expect((await brainsOf(user)).map((b) => b.name).sort()).toEqual(['good', 'refused']);
  });
});
