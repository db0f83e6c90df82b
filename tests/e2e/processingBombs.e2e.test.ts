import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { deflateStripTiff, niftiGzipBomb, zarrZlibChunkBomb } from '#tests/formats/craft/bombs';
import { client, newUser, type Client } from '#tests/support/httpClient';
import { spawnedServiceEnv } from '#tests/support/serviceEnv';
import { spawnAllInOne, type ServiceProcess } from '#tests/support/spawnService';
import { waitFor } from '#tests/support/waitFor';
import { upload } from './uploads/uploadFixtures';

/**
 * The security sweep's three worst files, uploaded over HTTP to the all-in-one running as its own
 * process: each 1 MB or less and inflating to 1 GiB (a TIFF strip, a Zarr chunk, a gzipped NIfTI
 * volume). The server's resident memory is sampled from /proc while they are processed: it must not
 * grow by 300 MB, and each upload must end completed or failed with a reason a person can act on.
 */
const GiB = 2 ** 30;
const MiB = 2 ** 20;

let service: ServiceProcess | undefined;
const dataDir = mkdtempSync(path.join(tmpdir(), 'catalogue-bombs-'));

afterAll(async () => {
  await service?.kill();
  rmSync(dataDir, { recursive: true, force: true });
});

function residentBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kib === undefined) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kib) * 1024;
}

interface Finished {
  readonly status: string;
  readonly metadata: Record<string, unknown>;
}

function finished(api: Client, token: string, id: string): Promise<Finished> {
  return waitFor(
    `upload ${id} to finish`,
    async () => {
      const res = await api.get(`/api/file-uploads/${id}/`, { token });
      expect(res.status).toBe(200);
      return res.body as Finished;
    },
    {
      timeoutMs: 40_000,
      intervalMs: 100,
      until: ({ status }) => status === 'completed' || status === 'failed',
    },
  );
}

test('1 GiB bombs in a TIFF strip, a Zarr chunk and a gzipped NIfTI: bounded memory, each finished with a reason', async () => {
  service = await spawnAllInOne(await spawnedServiceEnv('bombs', dataDir));
  const pid = service.pid;
  const api = client(service.url);
  const user = await newUser(api);
  const files: Array<[string, Buffer]> = [
    ['strip-bomb.tif', deflateStripTiff(GiB)],
    ['chunk-bomb.zarr', zarrZlibChunkBomb(1024, GiB)],
    ['volume-bomb.nii.gz', niftiGzipBomb(1024)],
  ];
  const baseline = residentBytes(pid);
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, residentBytes(pid))), 20);
  try {
    const ids: string[] = [];
    for (const [name, bytes] of files) {
      expect(bytes.length).toBeLessThan(1.1 * MiB);
      const res = await upload(api, user.token, name, bytes);
      expect(res.status).toBe(201);
      ids.push(res.body.id as string);
    }
    const [tiff, zarr, nifti] = await Promise.all(ids.map((id) => finished(api, user.token, id)));
    peak = Math.max(peak, residentBytes(pid));

    expect(tiff).toMatchObject({
      status: 'failed',
      metadata: {
        error:
          'a TIFF strip of 64×64 pixels (4096 bytes): its deflate data inflates past the 4096 bytes it may hold',
      },
    });
    expect(zarr).toMatchObject({
      status: 'completed',
      metadata: {
        format: 'zarr',
        shape: [2, 2, 2],
        preview_skipped:
          'a Zarr chunk of 1073741824 bytes (chunks [1024,1024,1024] of |u1) is larger than the 256 MiB an inspection may decode at once',
      },
    });
    expect(nifti).toMatchObject({
      status: 'failed',
      metadata: {
        error: expect.stringMatching(/^gzip bomb: \d+ bytes inflate to more than \d+$/) as unknown,
      },
    });
  } finally {
    clearInterval(sampler);
  }
  const growthMiB = Math.round((peak - baseline) / MiB);
  expect(growthMiB).toBeLessThan(300);
}, 60_000);
