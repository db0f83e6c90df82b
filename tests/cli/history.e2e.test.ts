import { brainForm, nifti } from '#tests/e2e/brains/brainFixtures';
import { type CliUser, type CliWorld, loggedInUser, startCliWorld } from './cliService';
import { runCli } from './runCli';

/**
 * `bic history KEY` (a table within 80 columns: when, who, what happened, what changed; --json; every
 * page followed) and `bic brains show KEY --as-of TIME`, against the real all-in-one.
 */
let world: CliWorld;
let owner: CliUser & { token: string };
let stranger: CliUser;
let brain: { id: number; readable_id: string };
/** X-Event-Position of each rename, in order. */
const renames: string[] = [];
const RENAMES = 104;

beforeAll(async () => {
  world = await startCliWorld();
  owner = (await loggedInUser(world)) as CliUser & { token: string };
  stranger = await loggedInUser(world);
  const created = await world.api.post('/api/brains/', {
    token: owner.token,
    body: brainForm({ name: 'Name 0', atlas: world.taxonomy.atlas.id }, nifti()),
  });
  expect(created.status).toBe(201);
  brain = created.body;
  // More events than the server's largest page (100): the CLI must follow the pages.
  for (let i = 1; i <= RENAMES; i++) {
    const res = await world.api.patch(`/api/brains/${brain.id}/`, {
      token: owner.token,
      json: { name: `Name ${i}` },
    });
    expect(res.status).toBe(200);
    renames.push(res.headers.get('x-event-position')!);
  }
}, 120_000);
afterAll(() => world?.service.close());

describe('bic history', () => {
  test('a table within 80 columns: who, when, what happened, each changed field as "a" → "b"', async () => {
    const res = await runCli(['history', String(brain.id)], owner.env);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const lines = res.stdout.trimEnd().split('\n');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    const created = lines.findIndex((l) => l.includes('BrainCreated'));
    expect(lines[created]).toMatch(
      new RegExp(
        `^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\dZ  ${owner.username}  BrainCreated  brain ${brain.id}$`,
      ),
    );
    expect(lines[created + 1]).toMatch(/^ {4}id = \d+$/);
    expect(lines).toContain('    name = "Name 0"');
    expect(lines).toContain('    name: "Name 0" → "Name 1"');
    // The last rename is on the second page of the server's answer.
    expect(lines).toContain(`    name: "Name ${RENAMES - 1}" → "Name ${RENAMES}"`);
    expect(lines.filter((l) => / BrainUpdated {2}brain /.test(l))).toHaveLength(RENAMES);
    // The file's processing, by the system.
    expect(lines.some((l) => / system {2}UploadProcessingStarted {2}file_upload [0-9a-f]{8}…$/.test(l))).toBe(
      true,
    );
  });

  test('--json: every entry, oldest first, as the server gave them; by readable_id the same', async () => {
    const res = await runCli(['history', brain.readable_id, '--json'], owner.env);
    expect(res.code).toBe(0);
    const entries = JSON.parse(res.stdout) as Array<{ type: string; position: string; changes: object }>;
    const all = await world.api.get(`/api/brains/${brain.id}/history/`, { token: owner.token });
    expect(entries).toEqual(all.body);
    expect(entries.filter((e) => e.type === 'BrainUpdated').map((e) => e.position)).toEqual(renames);
  });

  test('--of me: your account; --of upload: a file upload', async () => {
    const me = await runCli(['history', '--of', 'me'], owner.env);
    expect(me.code).toBe(0);
    expect(me.stdout).toContain(`UserRegistered  user ${owner.id}`);
    expect(me.stdout).toContain('AccessTokenIssued  token ');
    const entries = JSON.parse(
      (await runCli(['history', String(brain.id), '--json'], owner.env)).stdout,
    ) as Array<{
      resource: { type: string; id: string };
    }>;
    const uploadId = entries.find((e) => e.resource.type === 'file_upload')!.resource.id;
    const upload = await runCli(['history', uploadId, '--of', 'upload'], owner.env);
    expect(upload.code).toBe(0);
    expect(upload.stdout).toContain('UploadReceived');
    expect(upload.stdout).toContain('    status = "uploaded"');
  });

  test('exit codes: 4 for someone else, 5 for no such brain, 3 logged out, 2 without a key', async () => {
    const forbidden = await runCli(['history', String(brain.id)], stranger.env);
    expect(forbidden.code).toBe(4);
    expect(forbidden.stdout).toBe('');
    expect((await runCli(['history', '999999'], owner.env)).code).toBe(5);
    const loggedOut = await runCli(['history', String(brain.id)], {
      ...owner.env,
      BIC_CONFIG_DIR: '/nonexistent-h3',
    });
    expect(loggedOut.code).toBe(3);
    expect((await runCli(['history'], owner.env)).code).toBe(2);
    expect((await runCli(['history', '1', '--of', 'planet'], owner.env)).code).toBe(2);
  });
});

describe('bic brains show --as-of', () => {
  test('by position and by time: the brain as it was then, the position on stderr', async () => {
    const at = await runCli(
      ['brains', 'show', String(brain.id), '--as-of', renames[2]!, '--json'],
      owner.env,
    );
    expect(at.code).toBe(0);
    expect(JSON.parse(at.stdout)).toMatchObject({
      id: brain.id,
      name: 'Name 3',
      readable_id: brain.readable_id,
    });
    expect(at.stderr).toContain(`event position ${renames[2]}`);
    const table = await runCli(['brains', 'show', brain.readable_id, '--as-of', renames[0]!], stranger.env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^name\s+Name 1$/m);
    const now = await runCli(
      ['brains', 'show', String(brain.id), '--as-of', '2999-01-01T00:00:00Z', '--json'],
      owner.env,
    );
    expect(JSON.parse(now.stdout).name).toBe(`Name ${RENAMES}`);
  });

  test('before the brain existed: 5; a bad time: 6 naming as_of', async () => {
    expect(
      (await runCli(['brains', 'show', String(brain.id), '--as-of', '2000-01-01'], owner.env)).code,
    ).toBe(5);
    const bad = await runCli(['brains', 'show', String(brain.id), '--as-of', 'last tuesday'], owner.env);
    expect(bad.code).toBe(6);
    expect(bad.stderr).toContain('as_of');
  });
});
