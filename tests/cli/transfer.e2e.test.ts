import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { scratchDir } from '#tests/support/scratchDir';
import { waitFor } from '#tests/support/waitFor';
import { type CliUser, type CliWorld, loggedInUser, startCliWorld } from './cliService';
import { startInterceptingProxy } from './interceptingProxy';
import { finished, runCli, spawnCli } from './runCli';

const SIZE = 6 * 1024 * 1024 + 123;
const ESC = '\u001b';

let world: CliWorld;
let user: CliUser;
let work: string;
let scanBytes: Buffer;
let brain: { id: number; readable_id: string };
let etag: string;

beforeAll(async () => {
  world = await startCliWorld();
  user = await loggedInUser(world);
  work = scratchDir('bic-transfer-');
  scanBytes = randomBytes(SIZE);
  writeFileSync(path.join(work, 'scan.nii'), scanBytes);
  const create = await runCli(
    [
      'brains',
      'create',
      '--name',
      'Large scan',
      '--atlas',
      String(world.taxonomy.atlas.id),
      '--file',
      'scan.nii',
    ],
    user.env,
    { cwd: work },
  );
  expect(create.code).toBe(0);
  // Not a terminal: no progress bar, so not one escape sequence on either stream.
  expect(create.stdout + create.stderr).not.toContain(ESC);
  const readableId = /\((.+)\)/.exec(create.stdout)?.[1];
  const shown = await world.api.get(`/api/brains/${readableId}/`);
  brain = shown.body;
  const file = await world.api.get(`/api/brains/${brain.id}/file/`);
  etag = file.headers.get('etag')!;
});

afterAll(async () => {
  await world?.service.close();
});

let n = 0;
const freshDir = (): string => mkdtempSync(path.join(work, `dl${n++}-`));

describe('bic brains create --file and bic download', () => {
  it('uploads the file streamed and downloads it byte-identical, with no escape sequences off a terminal', async () => {
    const dir = freshDir();
    const download = await runCli(['download', brain.readable_id], user.env, { cwd: dir });
    expect(download.code).toBe(0);
    expect(download.stdout + download.stderr).not.toContain(ESC);
    expect(download.stdout).toBe(`Saved ${path.join(dir, 'scan.nii')} (${SIZE} bytes, SHA-256 verified)\n`);
    expect(readFileSync(path.join(dir, 'scan.nii')).equals(scanBytes)).toBe(true);
    expect(readdirSync(dir)).toEqual(['scan.nii']);

    const again = await runCli(['download', brain.readable_id], user.env, { cwd: dir });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already exists (--force to overwrite)');
  });

  it('resumes a partial file on disk with Range and If-Range on its ETag; the result is identical', async () => {
    const dir = freshDir();
    const target = path.join(dir, 'out.nii');
    const have = 1024 * 1024;
    writeFileSync(`${target}.part`, scanBytes.subarray(0, have));
    writeFileSync(`${target}.part.json`, JSON.stringify({ etag }));
    const proxy = await startInterceptingProxy(world.service.url, () => undefined);
    try {
      const download = await runCli(['download', String(brain.id), '-o', target], {
        ...user.env,
        BIC_SERVER: proxy.url,
      });
      expect(download.code).toBe(0);
      // The server answered 206: only the missing bytes came, appended to the ones on disk.
      expect(download.stdout).toBe(
        `Saved ${target} (${SIZE} bytes, resumed at byte ${have}, SHA-256 verified)\n`,
      );
      const sent = proxy.seen.filter((r) => r.url.endsWith('/file/'));
      expect(sent).toHaveLength(1);
      expect(sent[0]!.headers).toMatchObject({ range: `bytes=${have}-`, 'if-range': etag });
    } finally {
      await proxy.close();
    }
    expect(readFileSync(target).equals(scanBytes)).toBe(true);
    expect(existsSync(`${target}.part`) || existsSync(`${target}.part.json`)).toBe(false);
  });

  it('a download killed midway is resumed by the next run; the result is identical', async () => {
    const dir = freshDir();
    const target = path.join(dir, 'killed.nii');
    const cutAt = 2 * 1024 * 1024;
    // The first transfer stops after cutAt bytes and hangs, as a dying network does.
    const proxy = await startInterceptingProxy(world.service.url, (req, index) =>
      index === 0 ? { stallAfter: cutAt } : undefined,
    );
    try {
      const env = { ...user.env, BIC_SERVER: proxy.url };
      const first = spawnCli(['download', String(brain.id), '-o', target], env);
      const firstRun = finished(first, undefined, 60_000, ['download']);
      await waitFor(
        'the partial download to pass the cut',
        () => existsSync(`${target}.part`) && statSync(`${target}.part`).size >= cutAt,
        { timeoutMs: 30_000 },
      );
      first.kill('SIGKILL');
      await firstRun;
      expect(existsSync(target)).toBe(false);

      const second = await runCli(['download', String(brain.id), '-o', target], env);
      expect(second.code).toBe(0);
      expect(second.stdout).toMatch(/resumed at byte \d+, SHA-256 verified\)\n$/);
      expect(proxy.seen[1]!.headers).toMatchObject({ range: `bytes=${cutAt}-`, 'if-range': etag });
    } finally {
      await proxy.close();
    }
    expect(readFileSync(target).equals(scanBytes)).toBe(true);
  });

  it('bytes that do not match the SHA-256 in the ETag are removed: exit code 10', async () => {
    const dir = freshDir();
    const proxy = await startInterceptingProxy(world.service.url, () => ({
      reply: { status: 200, headers: { ETag: etag, 'Content-Length': '8' }, body: 'tampered' },
    }));
    try {
      const download = await runCli(
        ['download', String(brain.id), '-o', 'x.nii'],
        { ...user.env, BIC_SERVER: proxy.url },
        { cwd: dir },
      );
      expect(download.code).toBe(10);
      expect(download.stderr).toMatch(
        /^bic: .*x\.nii: SHA-256 does not match the server's; the bytes were removed\n$/,
      );
    } finally {
      await proxy.close();
    }
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('bic upload memory', () => {
  it('streams a file much larger than its memory use: the CLI never holds the file', async () => {
    const big = path.join(freshDir(), 'large.nii');
    const size = 512 * 1024 * 1024;
    truncateSync(openCloseFile(big), size); // sparse: quick to make, 512 MiB to read and send
    const child = spawnCli(['upload', big, '--json'], user.env);
    const run = finished(child, undefined, 120_000, ['upload']);
    let peakKb = 0;
    const sampler = setInterval(() => {
      const status = readProcStatus(child.pid!);
      const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
      peakKb = Math.max(peakKb, kb);
    }, 20);
    const result = await run.finally(() => clearInterval(sampler));
    expect(result.code).toBe(0);
    const record = JSON.parse(result.stdout) as { status: string; file_size_mb: number };
    expect(record.file_size_mb).toBe(512);
    // Read back after the last byte: the processor may already have claimed it.
    expect(['uploaded', 'processing', 'completed', 'failed']).toContain(record.status);
    // Node, tsx and the modules take about 130 MiB at their peak; the file alone would be 512 MiB.
    expect(peakKb).toBeGreaterThan(0);
    expect(peakKb).toBeLessThan(256 * 1024);
    // The upload itself is given 120 s (a busy machine): the test waits for it.
  }, 150_000);
});

const openCloseFile = (file: string): string => {
  closeSync(openSync(file, 'w'));
  return file;
};

/** /proc/<pid>/status while the process lives ('' once it is gone). */
const readProcStatus = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return '';
  }
};
