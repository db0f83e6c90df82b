import { execFile, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { createTaxonomy, type Taxonomy } from '#tests/e2e/brains/brainFixtures';
import { scratchDir } from '#tests/support/scratchDir';
import { waitFor } from '#tests/support/waitFor';
import { type CliUser, type CliWorld, loggedInUser, startCliWorld, stopCliWorld } from './cliService';
import { startInterceptingProxy } from './interceptingProxy';
import { finished, runCli, spawnCli } from './runCli';

interface Outcome {
  file: string;
  status: 'created' | 'skipped' | 'failed';
  name: string;
  id: number;
  readable_id: string;
  replayed?: boolean;
  error?: string;
}

interface Brain {
  id: number;
  name: string;
  readable_id: string;
  species: { scientific_name: string } | null;
  atlas: { id: number } | null;
}

interface Image {
  path: string;
  name: string;
  subject: string;
}

let world: CliWorld;
let rats: Taxonomy;
let dataset: string;
let images: Image[];

/** 3 subjects × 2 sessions × (anat T1w, func bold), written by nibabel; sub-03 is a rat. */
beforeAll(async () => {
  world = await startCliWorld({ RATE_LIMIT_UPLOAD: '100000/hour' }, { processor: true });
  rats = await createTaxonomy(world.api, world.staffToken);
  dataset = scratchDir('bic-bids-');
  const mouse = world.taxonomy.species.scientific_name;
  const { stdout } = await promisify(execFile)('/usr/bin/python3', [
    path.join(__dirname, 'fixtures', 'bidsDataset.py'),
    dataset,
    JSON.stringify({ '01': mouse, '02': mouse, '03': rats.species.scientific_name }),
  ]);
  images = JSON.parse(stdout) as Image[];
}, 120_000);

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

/** readable_id as the server derives it from the name (slug, then "-<id>"). */
const readableIdOf = (name: string, id: number): string =>
  `${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${id}`;

const bic = (user: CliUser, ...args: string[]) => runCli(args, user.env, { timeoutMs: 180_000 });

describe('bic import of a BIDS dataset', () => {
  let user: CliUser;
  /** Every request of this user's runs goes through it (the import state is kept per server URL). */
  let proxy: Awaited<ReturnType<typeof startInterceptingProxy>>;
  let viaProxy: Record<string, string>;
  beforeAll(async () => {
    user = await loggedInUser(world);
    proxy = await startInterceptingProxy(world.service.url, () => undefined);
    viaProxy = { ...user.env, BIC_SERVER: proxy.url, BIC_TOKEN: tokenOf(user) };
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it('one brain per NIfTI image, named by its entities, species from participants.tsv, sidecars in the metadata', async () => {
    expect(images).toHaveLength(12);
    const run = await runCli(['import', dataset, '--json', '--jobs', '3'], viaProxy, { timeoutMs: 180_000 });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    const outcomes = JSON.parse(run.stdout) as Outcome[];
    expect(outcomes.map((o) => o.status)).toEqual(Array(12).fill('created'));
    expect(outcomes.map((o) => o.file).sort()).toEqual(images.map((i) => i.path).sort());

    const brains = await brainsOf(user);
    expect(brains.map((b) => b.name).sort()).toEqual(images.map((i) => i.name).sort());
    expect(brains.map((b) => b.name)).toContain('sub-01_ses-02_T1w');
    for (const brain of brains) {
      expect(brain.readable_id).toBe(readableIdOf(brain.name, brain.id));
      const subject = images.find((i) => i.name === brain.name)!.subject;
      const taxonomy = subject === '03' ? rats : world.taxonomy;
      expect(brain.species?.scientific_name).toBe(taxonomy.species.scientific_name);
      expect(brain.atlas?.id).toBe(taxonomy.atlas.id);
    }
    expect(brains.find((b) => b.name === 'sub-01_ses-02_T1w')?.readable_id).toMatch(
      /^sub-01-ses-02-t1w-\d+$/,
    );

    // Each sidecar (with what it inherits from the dataset level) lands in its upload's metadata.
    const token = tokenOf(user);
    const metadataOf = (brain: Brain) =>
      waitFor(
        `processing of ${brain.name}`,
        async () => {
          const uploads = await world.api.get(`/api/file-uploads/?associated_brain=${brain.id}`, { token });
          const upload = (uploads.body as { status: string; metadata: Record<string, unknown> }[])[0];
          return upload?.status === 'completed' ? upload.metadata : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 200 },
      );
    const bold = brains.find((b) => b.name === 'sub-03_ses-02_task-rest_bold')!;
    expect(await metadataOf(bold)).toMatchObject({
      format: expect.any(String),
      RepetitionTime: 2, // from the dataset-level task-rest_bold.json
      TaskName: 'rest',
      EchoTime: 0.03, // the image's own sidecar overrides the dataset level's 0.05
      ScanLabel: 'sub-03_ses-02_task-rest_bold',
      sidecar_keys: expect.arrayContaining(['RepetitionTime', 'TaskName', 'EchoTime', 'ScanLabel']),
    });
    const t1w = brains.find((b) => b.name === 'sub-02_ses-01_T1w')!;
    const t1wMetadata = await metadataOf(t1w);
    expect(t1wMetadata).toMatchObject({
      MagneticFieldStrength: 3,
      FlipAngle: 8,
      ScanLabel: 'sub-02_ses-01_T1w',
    });
    expect(t1wMetadata).not.toHaveProperty('RepetitionTime');
  });

  it('a second run sends nothing: no create, no file byte; every scan skipped', async () => {
    const before = proxy.seen.length;
    const run = await runCli(['import', dataset, '--json'], viaProxy);
    expect(run.code).toBe(0);
    const outcomes = JSON.parse(run.stdout) as Outcome[];
    expect(outcomes.map((o) => o.status)).toEqual(Array(12).fill('skipped'));
    const seen = proxy.seen.slice(before);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((r) => r.method !== 'GET' && r.method !== 'OPTIONS')).toEqual([]);
    expect(seen.filter((r) => Number(r.headers['content-length'] ?? 0) > 0)).toEqual([]);
    expect(await brainsOf(user)).toHaveLength(12);
    const table = await runCli(['import', dataset], viaProxy);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^skipped \(already there\)\s+12\s/m);
    expect(table.stdout).toMatch(/^created\s+0\s/m);
  });

  it('a run killed (SIGKILL) halfway, with creates applied but not acknowledged, then run again: exactly one brain per scan', async () => {
    const other = await loggedInUser(world);
    let creates = 0;
    let stalling = true;
    // The first 4 creates go through; later ones reach the server, which applies them, but their
    // answers never arrive: the CLI is killed waiting, its state file knows only of the first 4.
    const proxy = await startInterceptingProxy(world.service.url, (req) => {
      if (req.method !== 'POST' || !req.url.startsWith('/api/brains')) return undefined;
      return ++creates <= 4 || !stalling ? undefined : { stallAfter: 0 };
    });
    const env = { ...other.env, BIC_SERVER: proxy.url, BIC_TOKEN: tokenOf(other) };
    let rerun: { code: number | null; stdout: string };
    let child: ChildProcess | undefined;
    try {
      child = spawnCli(['import', dataset, '--jobs', '2'], env);
      const done = finished(child, undefined, 120_000, ['import']).catch(() => undefined);
      await waitFor('6 brains applied', async () => (await brainsOf(other)).length >= 6, {
        timeoutMs: 60_000,
        intervalMs: 100,
      });
      child.kill('SIGKILL');
      await done;
      const stateDir = path.join(other.configDir, 'imports');
      const stateLines = readdirSync(stateDir).flatMap((f) =>
        readFileSync(path.join(stateDir, f), 'utf8').split('\n').filter(Boolean),
      );
      expect(stateLines).toHaveLength(4);
      expect(await brainsOf(other)).toHaveLength(6);

      stalling = false;
      rerun = await runCli(['import', dataset, '--json'], env, { timeoutMs: 180_000 });
    } finally {
      await proxy.close();
    }
    expect(rerun.code).toBe(0);
    const outcomes = JSON.parse(rerun.stdout) as Outcome[];
    expect(outcomes.filter((o) => o.status === 'skipped')).toHaveLength(4);
    expect(outcomes.filter((o) => o.status === 'created' && o.replayed)).toHaveLength(2);
    expect(outcomes.filter((o) => o.status === 'created' && !o.replayed)).toHaveLength(6);
    const brains = await brainsOf(other);
    expect(brains).toHaveLength(12);
    expect(new Set(brains.map((b) => b.name)).size).toBe(12);
    expect(new Set(outcomes.map((o) => o.id))).toEqual(new Set(brains.map((b) => b.id)));
  }, 180_000);

  it('an atlas of another species than participants.tsv gives: each such image listed, nothing sent', async () => {
    const other = await loggedInUser(world);
    const bad = await bic(other, 'import', dataset, '--atlas', world.taxonomy.atlas.slug);
    expect(bad.code).toBe(6);
    const lines = bad.stderr.trim().split('\n');
    const problems = lines.filter((l) => / is not the species of atlas /.test(l));
    expect(problems).toHaveLength(4); // sub-03's images: a rat
    expect(problems.every((l) => l.startsWith('bic: sub-03/'))).toBe(true);
    expect(lines.at(-1)).toBe('bic: 4 problems in the dataset (listed above): nothing was sent');
    expect(await brainsOf(other)).toEqual([]);
  });
});
