import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { scratchDir } from '#tests/support/scratchDir';
import { waitFor } from '#tests/support/waitFor';
import { type CliUser, type CliWorld, loggedInUser, startCliWorld, stopCliWorld } from './cliService';
import { type Intercept, type SeenRequest, startInterceptingProxy } from './interceptingProxy';
import { finished, runCli, spawnCli } from './runCli';

const MiB = 1024 * 1024;
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
/** The record is read once the last byte is in: its processing may have begun already. */
const STATUS = '\\((?:uploaded|processing|completed|failed)\\)';

let world: CliWorld;
let user: CliUser;
let dir: string;
let proxy: Awaited<ReturnType<typeof startInterceptingProxy>>;
/** What the proxy does with the next requests (each test sets it). */
let decide: (req: SeenRequest, index: number) => Intercept = () => undefined;

beforeAll(async () => {
  world = await startCliWorld();
  user = await loggedInUser(world);
  dir = scratchDir('bic-tus-');
  proxy = await startInterceptingProxy(world.service.url, (req, i) => decide(req, i));
});

afterAll(async () => {
  await proxy?.close();
  await stopCliWorld(world);
});

beforeEach(() => {
  decide = () => undefined;
  proxy.seen.length = 0;
});

const token = (): string =>
  (JSON.parse(readFileSync(path.join(user.configDir, 'config.json'), 'utf8')) as { token: string }).token;

/** `bic …` as the user, through the proxy, 1 MiB tus chunks. */
const env = (extra: Record<string, string> = {}) => ({
  ...user.env,
  BIC_SERVER: proxy.url,
  BIC_TOKEN: token(),
  BIC_UPLOAD_CHUNK_MB: '1',
  ...extra,
});
const bic = (args: string[], extra: Record<string, string> = {}) =>
  runCli(args, env(extra), { cwd: dir, timeoutMs: 120_000 });

function scan(name: string, size: number): { file: string; sha256: string } {
  const bytes = randomBytes(size);
  const file = path.join(dir, name);
  writeFileSync(file, bytes);
  return { file, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** The SHA-256 of the bytes the service stored for an upload (its download). */
async function storedSha256(id: string): Promise<string> {
  const response = await fetch(`${world.service.url}/api/file-uploads/${id}/download/`, {
    headers: { Authorization: `Token ${token()}` },
  });
  expect(response.status).toBe(200);
  return createHash('sha256')
    .update(Buffer.from(await response.arrayBuffer()))
    .digest('hex');
}

/** Unfinished uploads kept for resuming, as the config directory has them. */
function keptUploads(): { uploadUrl: string }[] {
  const kept = path.join(user.configDir, 'uploads');
  if (!existsSync(kept)) return [];
  return readdirSync(kept)
    .filter((name) => name.endsWith('.json'))
    .map(
      (name) =>
        (JSON.parse(readFileSync(path.join(kept, name), 'utf8')) as { upload: { uploadUrl: string } }).upload,
    );
}

/** The server's offset of a tus upload (HEAD), straight to the service. */
async function serverOffset(uploadUrl: string): Promise<number> {
  const url = new URL(new URL(uploadUrl).pathname, world.service.url);
  const response = await fetch(url, {
    method: 'HEAD',
    headers: { Authorization: `Token ${token()}`, 'Tus-Resumable': '1.0.0' },
  });
  return response.status === 200 ? Number(response.headers.get('upload-offset')) : -response.status;
}

/** The offset once no request holds the upload's lock any more. */
const settledOffset = (uploadUrl: string): Promise<number> =>
  waitFor('the upload unlocked', () => serverOffset(uploadUrl), {
    timeoutMs: 30_000,
    until: (o) => o !== -423,
  });

const patches = () => proxy.seen.filter((r) => r.method === 'PATCH');
const patchedBytes = () => patches().reduce((sum, r) => sum + Number(r.headers['content-length'] ?? 0), 0);
const uploadedId = (stdout: string): string => new RegExp(`as (${UUID})`).exec(stdout)?.[1] ?? '';

describe('bic upload over tus', () => {
  it('creates with its file name, sends 1 MiB PATCHes each with a SHA-256 checksum, and leaves nothing to resume', async () => {
    const { sha256 } = scan('plain.nii', 3 * MiB + 5);
    const run = await bic(['upload', 'plain.nii']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^Uploaded plain\\.nii as ${UUID} ${STATUS}\\n$`));
    const id = uploadedId(run.stdout);

    const create = proxy.seen.find((r) => r.method === 'POST' && r.url === '/api/file-uploads/tus/');
    expect(create?.headers['upload-length']).toBe(String(3 * MiB + 5));
    expect(create?.headers['upload-metadata']).toContain(
      `filename ${Buffer.from('plain.nii').toString('base64')}`,
    );
    expect(patches().map((r) => r.url)).toEqual(Array(4).fill(`/api/file-uploads/tus/${id}`));
    for (const patch of patches())
      expect(patch.headers['upload-checksum']).toMatch(/^sha256 [A-Za-z0-9+/]+=*$/);
    expect(patchedBytes()).toBe(3 * MiB + 5);

    expect(await storedSha256(id)).toBe(sha256);
    expect(keptUploads()).toEqual([]);

    // The same file again is a new upload, not the finished one found again.
    const again = await bic(['upload', 'plain.nii']);
    expect(again.code).toBe(0);
    expect(uploadedId(again.stdout)).not.toBe(id);
    expect(again.stdout).not.toContain('resumed');
  });

  it('after a SIGKILL mid-upload, the next run sends only what the server does not have', async () => {
    const size = 12 * MiB;
    const { sha256 } = scan('killed.nii', size);
    decide = (req) => (req.method === 'PATCH' ? { requestBytesPerSecond: 2 * MiB } : undefined);
    const child = spawnCli(['upload', 'killed.nii'], env(), dir);
    const done = finished(child, undefined, 120_000, ['upload', 'killed.nii']);
    const offset = await waitFor(
      'the server to hold 3 MiB of the upload',
      async () => {
        const [kept] = keptUploads();
        return kept ? serverOffset(kept.uploadUrl) : 0;
      },
      { timeoutMs: 60_000, intervalMs: 50, until: (bytes) => bytes >= 3 * MiB },
    );
    child.kill('SIGKILL');
    expect((await done).code).toBeNull();
    const [kept] = keptUploads();
    // Until the server has seen the connection go, the upload is locked (423): wait for its offset.
    const atKill = await settledOffset(kept?.uploadUrl ?? '');
    expect(atKill).toBeGreaterThanOrEqual(offset);
    expect(atKill).toBeLessThan(size);

    decide = () => undefined;
    proxy.seen.length = 0;
    const again = await bic(['upload', 'killed.nii']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^Uploaded killed\.nii as .+, resumed at [\d.]+ MiB of 12\.0 MiB\n$/);
    const id = uploadedId(again.stdout);
    expect(kept?.uploadUrl).toMatch(new RegExp(`/api/file-uploads/tus/${id}$`));
    // No new upload: a HEAD, then PATCHes from the server's offset to the end, nothing twice.
    expect(proxy.seen.some((r) => r.method === 'POST' && r.url.startsWith('/api/file-uploads/tus/'))).toBe(
      false,
    );
    expect(
      proxy.seen.find((r) => r.url.startsWith('/api/file-uploads/tus/') && r.method !== 'OPTIONS')?.method,
    ).toBe('HEAD');
    expect(patchedBytes()).toBe(size - atKill);
    expect(await storedSha256(id)).toBe(sha256);
    expect(keptUploads()).toEqual([]);
  });

  it('a connection dropped mid-PATCH is resumed by the same run (HEAD, then on from the offset)', async () => {
    const size = 6 * MiB;
    const { sha256 } = scan('dropped.nii', size);
    let cut = false;
    decide = (req) => {
      if (req.method !== 'PATCH' || cut || patches().length < 3) return undefined;
      cut = true;
      return { cutRequestAfter: 300 * 1024 };
    };
    const run = await bic(['upload', 'dropped.nii']);
    expect(run.code).toBe(0);
    expect(cut).toBe(true);
    expect(run.stderr).toMatch(/dropped\.nii: .+; retrying/);
    const id = uploadedId(run.stdout);
    const tusRequests = proxy.seen.filter((r) => r.url.startsWith('/api/file-uploads/tus/'));
    expect(tusRequests.filter((r) => r.method === 'POST')).toHaveLength(1);
    expect(tusRequests.filter((r) => r.method === 'HEAD')).toHaveLength(1);
    // At most the cut chunk is sent again.
    expect(patchedBytes()).toBeLessThanOrEqual(size + MiB);
    expect(await storedSha256(id)).toBe(sha256);
  });

  it('Ctrl-C stops cleanly: exit 130, how to resume, the upload kept on the server; the next run finishes it', async () => {
    const size = 8 * MiB;
    const { sha256 } = scan('interrupted.nii', size);
    decide = (req) => (req.method === 'PATCH' ? { requestBytesPerSecond: 2 * MiB } : undefined);
    const child = spawnCli(['upload', 'interrupted.nii'], env(), dir);
    const done = finished(child, undefined, 120_000, ['upload', 'interrupted.nii']);
    await waitFor(
      'part of the upload on the server',
      async () => {
        const [kept] = keptUploads();
        return kept ? serverOffset(kept.uploadUrl) : 0;
      },
      { timeoutMs: 60_000, intervalMs: 50, until: (bytes) => bytes >= MiB },
    );
    child.kill('SIGINT');
    const stopped = await done;
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toMatch(
      /interrupted: 1 file\(s\) not finished \(interrupted\.nii\).+run the same `bic upload` again to resume/,
    );
    const [kept] = keptUploads();
    expect(await settledOffset(kept?.uploadUrl ?? '')).toBeGreaterThan(0);

    decide = () => undefined;
    const again = await bic(['upload', 'interrupted.nii']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('resumed at');
    expect(await storedSha256(uploadedId(again.stdout))).toBe(sha256);
  });

  it('several files at once (--jobs), an overall progress, a summary, and every failure listed with its reason', async () => {
    const files = ['a.nii', 'b.nii', 'c.nii'].map((name) => ({ name, ...scan(name, 3 * MiB) }));
    writeFileSync(path.join(dir, 'notes.txt'), 'not a scan');
    decide = (req) => (req.method === 'PATCH' ? { requestBytesPerSecond: 8 * MiB } : undefined);
    const run = await bic(['upload', '--jobs', '3', 'a.nii', 'notes.txt', 'b.nii', 'c.nii']);

    expect(run.code).toBe(6);
    const uploaded = run.stdout.trim().split('\n');
    expect(uploaded.sort()).toEqual(
      files.map((f) => expect.stringMatching(new RegExp(`^Uploaded ${f.name} as ${UUID} ${STATUS}$`))),
    );
    for (const f of files)
      expect(await storedSha256(uploadedId(uploaded.find((l) => l.includes(f.name)) ?? ''))).toBe(f.sha256);
    // In parallel: another file's PATCH comes between the first and last PATCH of each file.
    const order = patches().map((r) => r.url);
    const interleaved = [...new Set(order)].every((url) => {
      const between = order.slice(order.indexOf(url), order.lastIndexOf(url));
      return between.some((other) => other !== url);
    });
    expect(interleaved).toBe(true);
    // Plain progress lines (no terminal): files done of all, bytes, rate, time left; then the summary.
    expect(run.stderr).toMatch(
      /^bic: 4\/4 files, 9\.0 MiB of 9\.0 MiB \(100%\), [\d.]+ \S+\/s, 0s left \| 1 failed$/m,
    );
    expect(run.stderr).toMatch(
      /^bic: 3 of 4 files uploaded, 9\.0 MiB sent in [\d.]+ s \([\d.]+ \S+\/s\); 1 failed:$/m,
    );
    expect(run.stderr).toMatch(/^bic: {3}notes\.txt: invalid request \(400\): .*filename.*$/m);
    expect(run.stderr).toMatch(/^bic: 1 of 4 files failed$/m);
    expect(run.stderr).not.toContain('\u001b');
  });

  it('--json prints each file upload record as before', async () => {
    scan('json.nii', 1000);
    const run = await bic(['upload', 'json.nii', '--json']);
    expect(run.code).toBe(0);
    const record = JSON.parse(run.stdout) as { id: string; status: string; name: string };
    // The record as read after the last byte: the processor may already have claimed it, or even
    // finished with it (random bytes are no NIfTI: failed).
    expect(record).toMatchObject({ name: 'json.nii' });
    expect(['uploaded', 'processing', 'failed']).toContain(record.status);
  });

  it('a server without tus (OPTIONS not answered with Tus-Version) gets one multipart POST', async () => {
    const { sha256 } = scan('older.nii', 2 * MiB);
    decide = (req) =>
      req.method === 'OPTIONS' ? { reply: { status: 404, body: '{"detail":"Not found."}' } } : undefined;
    const run = await bic(['upload', 'older.nii']);
    expect(run.code).toBe(0);
    expect(proxy.seen.filter((r) => r.method === 'POST').map((r) => r.url)).toEqual(['/api/file-uploads/']);
    expect(proxy.seen.some((r) => r.method === 'PATCH')).toBe(false);
    expect(await storedSha256(uploadedId(run.stdout))).toBe(sha256);
  });
});
