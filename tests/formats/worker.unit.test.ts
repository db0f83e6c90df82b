import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { runPython } from './python';

let dir: string;
let worker: Worker;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'formats-worker-'));
  await runPython('writeTiffFixtures.py', [dir]);
  await runPython('writeZarrFixtures.py', [dir]);
  // geotiff loads the web-worker package, which reads workerData when loaded off the main thread:
  // a worker running inspectUpload must be given a workerData object (any, without `mod`).
  worker = new Worker(join(__dirname, 'inspectWorker.cjs'), { workerData: {} });
});

afterAll(async () => {
  await worker.terminate();
  await rm(dir, { recursive: true, force: true });
});

function inspectInWorker(path: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.postMessage(path);
  });
}

it('inspects NIfTI, TIFF and Zarr inside a worker thread, as the processor does', async () => {
  const nifti = '/usr/lib/python3/dist-packages/nibabel/tests/data/example4d.nii.gz';
  expect(await inspectInWorker(nifti)).toMatchObject({ ok: true, format: 'nifti' });
  expect(await inspectInWorker(join(dir, 'stack16.tif'))).toMatchObject({ ok: true, format: 'tiff' });
  expect(await inspectInWorker(join(dir, 'v2_blosc.zarr'))).toMatchObject({ ok: true, format: 'zarr' });
  expect(await inspectInWorker(join(dir, 'ratio.zarr'))).toMatchObject({
    ok: false,
    reason: expect.stringMatching(/^zip bomb/),
  });
});
