import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { niftiBytes } from '#tests/e2e/brains/brainFixtures';
import { scratchDir } from '#tests/support/scratchDir';
import { waitFor } from '#tests/support/waitFor';
import { type CliUser, type CliWorld, loggedInUser, startCliWorld, stopCliWorld } from './cliService';
import { startInterceptingProxy } from './interceptingProxy';
import { finished, runCli, spawnCli } from './runCli';

interface Outcome {
  file: string;
  status: 'created' | 'skipped' | 'failed';
  id: number;
  replayed?: boolean;
}

let world: CliWorld;

beforeAll(async () => {
  world = await startCliWorld({ RATE_LIMIT_UPLOAD: '100000/hour' });
});

afterAll(async () => {
  await stopCliWorld(world);
});

const tokenOf = (user: CliUser): string =>
  (JSON.parse(readFileSync(path.join(user.configDir, 'config.json'), 'utf8')) as { token: string }).token;

async function brainsOf(user: CliUser): Promise<{ id: number; name: string }[]> {
  const list = await world.api.get(`/api/brains/?uploader=${user.id}&shape=a`, { token: tokenOf(user) });
  expect(list.status).toBe(200);
  return list.body as { id: number; name: string }[];
}

function folderOf(count: number): string {
  const dir = scratchDir('bic-import-tus-');
  for (let n = 0; n < count; n++) {
    const bytes = niftiBytes();
    bytes.writeUInt8(n, bytes.length - 1);
    writeFileSync(path.join(dir, `scan-${n}.nii`), bytes);
  }
  return dir;
}

const isTus = (url: string) => url.startsWith('/api/file-uploads/tus');
const isCreate = (method: string, url: string) => method === 'POST' && /^\/api\/brains\/?(\?|$)/.test(url);

describe('bic import of large files (through tus, then a create from the upload)', () => {
  it('each file goes through tus, then POST /api/brains/ as JSON with `upload`', async () => {
    const user = await loggedInUser(world);
    const dir = folderOf(3);
    const proxy = await startInterceptingProxy(world.service.url, () => undefined);
    try {
      const env = {
        ...user.env,
        BIC_SERVER: proxy.url,
        BIC_TOKEN: tokenOf(user),
        BIC_IMPORT_TUS_ABOVE_MB: '0',
      };
      const run = await runCli(['import', dir, '--category', world.taxonomy.category.name, '--json'], env);
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
      expect((JSON.parse(run.stdout) as Outcome[]).map((o) => o.status)).toEqual([
        'created',
        'created',
        'created',
      ]);
      const creates = proxy.seen.filter((r) => isCreate(r.method, r.url));
      expect(creates).toHaveLength(3);
      for (const create of creates) expect(create.headers['content-type']).toBe('application/json');
      expect(proxy.seen.filter((r) => r.method === 'POST' && isTus(r.url))).toHaveLength(3);
    } finally {
      await proxy.close();
    }
    const brains = await brainsOf(user);
    expect(brains.map((b) => b.name).sort()).toEqual(['scan-0', 'scan-1', 'scan-2']);
    const uploads = await world.api.get(`/api/file-uploads/?associated_brain=${brains[0]!.id}`, {
      token: tokenOf(user),
    });
    expect(uploads.body).toEqual([expect.objectContaining({ filename: `${brains[0]!.name}.nii` })]);
  });

  it('killed with uploads sent and creates applied but unanswered, run again: no byte sent again, one brain per scan', async () => {
    const user = await loggedInUser(world);
    const dir = folderOf(4);
    let creates = 0;
    let stalling = true;
    const proxy = await startInterceptingProxy(world.service.url, (req) => {
      if (!isCreate(req.method, req.url)) return undefined;
      return ++creates <= 2 || !stalling ? undefined : { stallAfter: 0 };
    });
    const env = {
      ...user.env,
      BIC_SERVER: proxy.url,
      BIC_TOKEN: tokenOf(user),
      BIC_IMPORT_TUS_ABOVE_MB: '0',
    };
    const args = ['import', dir, '--category', world.taxonomy.category.name, '--json', '--jobs', '2'];
    let child: ChildProcess | undefined;
    try {
      child = spawnCli(args, env);
      const done = finished(child, undefined, 120_000, args).catch(() => undefined);
      await waitFor('4 brains applied', async () => (await brainsOf(user)).length >= 4, {
        timeoutMs: 60_000,
        intervalMs: 100,
      });
      child.kill('SIGKILL');
      await done;
      stalling = false;
      const before = proxy.seen.length;
      const rerun = await runCli(args, env);
      expect(rerun.code).toBe(0);
      const outcomes = JSON.parse(rerun.stdout) as Outcome[];
      expect(outcomes.filter((o) => o.status === 'skipped')).toHaveLength(2);
      expect(outcomes.filter((o) => o.status === 'created' && o.replayed)).toHaveLength(2);
      const seen = proxy.seen.slice(before);
      expect(seen.filter((r) => isTus(r.url))).toEqual([]);
      expect(seen.filter((r) => isCreate(r.method, r.url))).toHaveLength(2);
    } finally {
      await proxy.close();
    }
    const brains = await brainsOf(user);
    expect(brains.map((b) => b.name).sort()).toEqual(['scan-0', 'scan-1', 'scan-2', 'scan-3']);
  }, 180_000);
});
