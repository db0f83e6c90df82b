import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { scratchDir } from '#tests/support/scratchDir';
import { waitFor } from '#tests/support/waitFor';
import { type CliUser, type CliWorld, loggedInUser, startCliWorld } from './cliService';
import { startInterceptingProxy } from './interceptingProxy';
import { newUser } from '#tests/support/httpClient';
import { BIC, freshConfigDir } from './runCli';

const hasTmux = spawnSync('tmux', ['-V']).status === 0;
// CI installs tmux (.ci/run): there a missing tmux fails this file instead of skipping it.
if (!hasTmux && process.env.CI)
  throw new Error('tmux is required for the terminal test (.ci/run installs it)');
const describeWithTmux = hasTmux ? describe : describe.skip;

/** A private tmux server (its own socket file), so the test never meets a user's sessions. */
const SOCKET = path.join(mkdtempSync(path.join(tmpdir(), 'bic-tmux-')), 'socket');
const tmux = (...args: string[]): string =>
  execFileSync('tmux', ['-S', SOCKET, ...args], { encoding: 'utf8' });

const storedToken = (u: CliUser): string =>
  (JSON.parse(readFileSync(path.join(u.configDir, 'config.json'), 'utf8')) as { token: string }).token;

let world: CliWorld;
let proxy: Awaited<ReturnType<typeof startInterceptingProxy>> | undefined;
let user: CliUser;

beforeAll(async () => {
  if (!hasTmux) return;
  world = await startCliWorld();
  user = await loggedInUser(world);
});

afterAll(async () => {
  await proxy?.close();
  await world?.service.close();
  if (hasTmux) spawnSync('tmux', ['-S', SOCKET, 'kill-server']);
  rmSync(path.dirname(SOCKET), { recursive: true, force: true });
});

describeWithTmux('bic on a terminal (tmux)', () => {
  it('login asks for email and password on the terminal and never echoes the password', async () => {
    const someone = await newUser(world.api);
    const configDir = freshConfigDir();
    const env = `env BIC_SERVER=${world.service.url} BIC_CONFIG_DIR=${configDir}`;
    tmux(
      'new-session',
      '-d',
      '-s',
      'login',
      '-x',
      '200',
      '-y',
      '10',
      `${env} ${process.execPath} ${BIC} login; echo "bic exited $?"; sleep 600`,
    );
    await waitForPane((text) => text.includes('Email:'), 'login');
    tmux('send-keys', '-t', 'login', someone.email, 'Enter');
    await waitForPane((text) => text.includes('Password:'), 'login');
    tmux('send-keys', '-t', 'login', someone.password, 'Enter');

    const pane = await waitForPane((text) => text.includes('bic exited'), 'login');

    expect(pane).toContain(`Email: ${someone.email}`);
    expect(pane).toContain('bic exited 0');
    expect(pane).not.toContain(someone.password);
    expect(pane).toContain(`as ${someone.username}`);
  });

  it('draws a progress bar with percent, bytes/s and ETA while uploading', async () => {
    const dir = scratchDir('bic-tty-');
    writeFileSync(path.join(dir, 'scan.nii'), randomBytes(24 * 1024 * 1024));
    // Through a proxy that takes the body at 8 MiB/s: the upload lasts seconds, so the bar is seen moving
    // (tus PATCHes of 4 MiB: the bar moves within each and across them).
    proxy = await startInterceptingProxy(world.service.url, (req) =>
      req.method === 'PATCH' || req.method === 'POST'
        ? { requestBytesPerSecond: 8 * 1024 * 1024 }
        : undefined,
    );
    const env = [`BIC_SERVER=${proxy.url}`, `BIC_TOKEN=${storedToken(user)}`, 'BIC_UPLOAD_CHUNK_MB=4'];
    const command = ['env', ...env, process.execPath, BIC, 'upload', 'scan.nii'].join(' ');
    tmux(
      'new-session',
      '-d',
      '-s',
      'bic',
      '-x',
      '200',
      '-y',
      '20',
      '-c',
      dir,
      `${command}; echo "bic exited $?"; sleep 600`,
    );

    const frames: string[] = [];
    const pane = await waitForPane((text) => {
      frames.push(text);
      return text.includes('bic exited');
    });

    expect(pane).toContain('bic exited 0');
    const bar =
      /scan\.nii \[[=\-█░]+\] (\d+)% \| [\d.]+ (?:B|KiB|MiB)\/24\.0 MiB \| [\d.]+ (?:B|KiB|MiB|GiB)\/s \| ETA \d+s/;
    expect(bar.exec(pane)?.[1]).toBe('100');
    // A frame caught midway: a percent between 0 and 100, with its speed and ETA.
    const midway = frames.map((f) => bar.exec(f)).find((m) => m && Number(m[1]) > 0 && Number(m[1]) < 100);
    expect(midway).toBeDefined();
    expect(pane).toMatch(/Uploaded scan\.nii as [0-9a-f-]{36} \((uploaded|processing|completed|failed)\)/);
  }, 120_000);
});

describeWithTmux('bic upload of several files on a terminal (tmux)', () => {
  it('draws one overall bar: files done of all, percent of all bytes, rate and time left; then a summary', async () => {
    const dir = scratchDir('bic-tty-many-');
    for (const name of ['one.nii', 'two.nii', 'three.nii'])
      writeFileSync(path.join(dir, name), randomBytes(8 * 1024 * 1024));
    const slow = await startInterceptingProxy(world.service.url, (req) =>
      req.method === 'PATCH' ? { requestBytesPerSecond: 8 * 1024 * 1024 } : undefined,
    );
    try {
      const env = [`BIC_SERVER=${slow.url}`, `BIC_TOKEN=${storedToken(user)}`, 'BIC_UPLOAD_CHUNK_MB=2'];
      const command = [
        'env',
        ...env,
        process.execPath,
        BIC,
        'upload',
        '--jobs',
        '2',
        'one.nii',
        'two.nii',
        'three.nii',
      ].join(' ');
      tmux(
        'new-session',
        '-d',
        '-s',
        'many',
        '-x',
        '200',
        '-y',
        '20',
        '-c',
        dir,
        `${command}; echo "bic exited $?"; sleep 600`,
      );
      const frames: string[] = [];
      const pane = await waitForPane((text) => {
        frames.push(text);
        return text.includes('bic exited');
      }, 'many');
      expect(pane).toContain('bic exited 0');
      const bar =
        /(\d)\/3 files \[[=\-█░]+\] (\d+)% \| [\d.]+ (?:B|KiB|MiB)\/24\.0 MiB \| [\d.]+ (?:B|KiB|MiB|GiB)\/s \| ETA \S+/;
      const midway = frames.map((f) => bar.exec(f)).find((m) => m && Number(m[2]) > 0 && Number(m[2]) < 100);
      expect(midway).toBeDefined();
      expect(pane).toMatch(/3 of 3 files uploaded, 24\.0 MiB sent in [\d.]+ s/);
    } finally {
      await slow.close();
    }
  }, 120_000);
});

/** The pane's text once `done` holds for it. */
function waitForPane(done: (text: string) => boolean, session = 'bic'): Promise<string> {
  return waitFor(`the ${session} pane`, () => tmux('capture-pane', '-p', '-t', session), {
    timeoutMs: 60_000,
    intervalMs: 100,
    until: done,
  });
}
