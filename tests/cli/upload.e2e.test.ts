import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { scratchDir } from '#tests/support/scratchDir';
import { niftiBytes } from '#tests/e2e/brains/brainFixtures';
import { type CliUser, type CliWorld, loggedInUser, startCliWorld, stopCliWorld } from './cliService';
import { runCli } from './runCli';

const ESC = '\u001b';

let world: CliWorld;
let user: CliUser;
let dir: string;

beforeAll(async () => {
  world = await startCliWorld({}, { processor: true });
  user = await loggedInUser(world);
  dir = scratchDir('bic-upload-');
  writeFileSync(path.join(dir, 'mouse.nii'), niftiBytes());
  writeFileSync(path.join(dir, 'broken.nii'), Buffer.from('this is not a NIfTI header at all'));
  writeFileSync(path.join(dir, 'notes.txt'), 'text');
});

afterAll(async () => {
  await stopCliWorld(world);
});

const bic = (...args: string[]) => runCli(args, user.env, { cwd: dir, timeoutMs: 120_000 });

/** `--wait` output: the "<name>: completed" line, then the metadata as JSON. */
function metadataOf(stdout: string): Record<string, unknown> {
  const [first, ...rest] = stdout.split('\n');
  expect(first).toBe('mouse.nii: completed');
  return JSON.parse(rest.join('\n'));
}

describe('bic upload', () => {
  it('--wait follows processing to completed and prints the metadata the processor extracted', async () => {
    const upload = await bic('upload', 'mouse.nii', '--wait');
    expect(upload.code).toBe(0);
    expect(upload.stdout + upload.stderr).not.toContain(ESC);
    expect(upload.stderr).toMatch(/^bic: uploaded mouse\.nii as [0-9a-f-]{36}; waiting for processing\n$/);
    expect(metadataOf(upload.stdout)).toMatchObject({ shape: [2, 2, 2] });
  });

  it('--wait with a file whose processing fails: the reason on one line, exit code 9', async () => {
    const upload = await bic('upload', 'broken.nii', '--wait');
    expect(upload.code).toBe(9);
    expect(upload.stderr.trim().split('\n').at(-1)).toMatch(/^bic: processing of broken\.nii failed: .+$/);
  });

  it('several files without --wait, then the list and one upload in detail', async () => {
    const upload = await bic('upload', 'mouse.nii', 'broken.nii', '--json');
    expect(upload.code).toBe(0);
    const created = upload.stdout
      .trim()
      .split(/\n(?=\{)/)
      .map((text) => JSON.parse(text) as { id: string; status: string; filename: string });
    // Fetched once the last byte is in: the processor may have taken it up already.
    for (const u of created) expect(['uploaded', 'processing', 'completed', 'failed']).toContain(u.status);

    const listed = await bic('uploads', 'list', '--json');
    expect(listed.code).toBe(0);
    const ids = (JSON.parse(listed.stdout) as { id: string }[]).map((u) => u.id);
    expect(ids).toEqual(expect.arrayContaining(created.map((u) => u.id)));

    // Sent at once (--jobs), each record printed as its upload ends: in either order.
    expect(created.map((u) => u.filename).sort()).toEqual(['broken.nii', 'mouse.nii']);
    const mouse = created.find((u) => u.filename === 'mouse.nii')!;
    const shown = await bic('uploads', 'show', mouse.id);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^id\\s+${mouse.id}$`, 'm'));
    expect(shown.stdout).toMatch(/^filename\s+mouse\.nii$/m);
  });

  it('an unsupported format is refused by the server: field and message, exit code 6', async () => {
    const upload = await bic('upload', 'notes.txt');
    expect(upload.code).toBe(6);
    // Refused at the tus creation, by its file name, before any byte is sent.
    expect(upload.stderr).toMatch(/^bic: invalid request \(400\): (file|filename): .+\n$/);
  });

  it('--name with several files is a usage error (exit code 2)', async () => {
    const upload = await bic('upload', '--name', 'x', 'mouse.nii', 'broken.nii');
    expect(upload.code).toBe(2);
  });
});

describe('bic brains create --wait', () => {
  it("creates the brain and follows its file's processing to the metadata", async () => {
    const create = await bic(
      'brains',
      'create',
      '--name',
      'Processed mouse',
      '--atlas',
      String(world.taxonomy.atlas.id),
      '--file',
      'mouse.nii',
      '--wait',
    );
    expect(create.code).toBe(0);
    expect(create.stderr).toMatch(
      /^bic: created brain \d+ \(processed-mouse-\d+\); waiting for processing\n$/,
    );
    expect(metadataOf(create.stdout)).toMatchObject({ shape: [2, 2, 2] });
  });
});
