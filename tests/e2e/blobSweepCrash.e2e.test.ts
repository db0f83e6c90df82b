import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createLocalDiskBlobStore } from '#shared/blobStore/localDisk/createLocalDiskBlobStore';
import { TEMP_FILE_PATTERN } from '#shared/blobStore/localDisk/blobPaths';
import { waitFor } from '#tests/support/waitFor';
import { upload } from './uploads/uploadFixtures';
import { client, newUser } from '#tests/support/httpClient';
import { spawnedServiceEnv } from '#tests/support/serviceEnv';
import { spawnAllInOne, type ServiceProcess } from '#tests/support/spawnService';

/**
 * The all-in-one is SIGKILLed while an upload streams in: the temp file it was writing stays on
 * disk. Restarted, its sweep (grace periods of a second here) removes it and counts it, removes
 * blobs no record names, and keeps every upload recorded before the kill (old enough, with that
 * grace, to be taken were it not named).
 */
const MiB = 1024 * 1024;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let service: ServiceProcess | undefined;
const dataDir = mkdtempSync(path.join(tmpdir(), 'catalogue-sweep-crash-'));

afterAll(async () => {
  await service?.kill();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Temp files under the blob store, with their sizes. */
function tempFiles(): { file: string; size: number }[] {
  const root = path.join(dataDir, 'blobs');
  const entries = readdirSync(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && TEMP_FILE_PATTERN.test(entry.name))
    .map((entry) => {
      const file = path.join(entry.parentPath, entry.name);
      return { file, size: statSync(file, { throwIfNoEntry: false })?.size ?? 0 };
    });
}

async function metric(url: string, name: string, kind: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics/`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`kind="${kind}"`));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** A multipart upload whose body is sent as the test says, and never ended unless told. */
function streamingUpload(url: string, token: string) {
  const boundary = `----sweep${randomBytes(8).toString('hex')}`;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  const response = fetch(`${url}/api/file-uploads/`, {
    method: 'POST',
    headers: { Authorization: `Token ${token}`, 'Content-Type': `multipart/form-data; boundary=${boundary}` },
    body,
    duplex: 'half',
  }).catch((error: unknown) => error);
  controller.enqueue(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="killed.nii"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    ),
  );
  return { send: (bytes: Buffer) => controller.enqueue(bytes), response };
}

test('a temp file left by a SIGKILL mid-upload is swept after restart; recorded uploads stay downloadable', async () => {
  const env = await spawnedServiceEnv('sweepcrash', dataDir, {
    PROCESSOR_ENABLED: 'false',
    BLOB_SWEEP_INTERVAL_SECONDS: '1',
    BLOB_SWEEP_LEFTOVER_GRACE_SECONDS: '1',
    BLOB_SWEEP_ORPHAN_GRACE_SECONDS: '1',
  });
  service = await spawnAllInOne(env);
  const api = client(service.url);
  const user = await newUser(api);
  const recorded: { id: string; bytes: Buffer }[] = [];
  for (const size of [200_000, 3 * MiB + 5]) {
    const bytes = randomBytes(size);
    const created = await upload(api, user.token, `kept-${size}.nii`, bytes);
    expect(created.status).toBe(201);
    recorded.push({ id: created.body.id as string, bytes });
  }

  const inFlight = streamingUpload(service.url, user.token);
  for (let i = 0; i < 12; i++) inFlight.send(randomBytes(MiB));
  const [writing] = await waitFor(
    'the upload to be written to a temp file',
    () => tempFiles().filter((t) => t.size >= 4 * MiB),
    { timeoutMs: 30_000, intervalMs: 100, until: (files) => files.length > 0 },
  );
  // Several sweeps with a one-second grace run while the client is silent: the temp file of an
  // upload this process is still receiving is no leftover, however long it was left untouched.
  await sleep(3000);
  expect(tempFiles().map((t) => t.file)).toEqual([writing!.file]);
  expect(await metric(service.url, 'blob_sweep_removed_total', 'leftover')).toBe(0);

  await service.kill();
  await inFlight.response;
  const left = tempFiles();
  expect(left.map((t) => t.file)).toEqual([writing!.file]);
  expect(left[0]!.size).toBeGreaterThanOrEqual(4 * MiB);

  // And what a kill during a burst of creates leaves: complete blobs, with their sidecars, that no
  // upload record names.
  const blobs = createLocalDiskBlobStore({ rootDir: path.join(dataDir, 'blobs') });
  const orphanSizes = [1000, 20_000, 300_000];
  for (const size of orphanSizes)
    await blobs.put(`uploads/${randomUUID()}.nii`, Readable.from([randomBytes(size)]));

  service = await spawnAllInOne(env);
  const url = service.url;
  await waitFor(
    'the sweep to count the temp file',
    () => metric(url, 'blob_sweep_removed_total', 'leftover'),
    {
      timeoutMs: 30_000,
      intervalMs: 100,
      until: (removed) => removed >= 1,
    },
  );
  expect(tempFiles()).toEqual([]);
  expect(await metric(url, 'blob_sweep_removed_total', 'leftover')).toBe(1);
  expect(await metric(url, 'blob_sweep_removed_bytes_total', 'leftover')).toBe(left[0]!.size);
  await waitFor('the sweep to count the orphans', () => metric(url, 'blob_sweep_removed_total', 'orphan'), {
    timeoutMs: 30_000,
    intervalMs: 100,
    until: (removed) => removed >= orphanSizes.length,
  });
  expect(await metric(url, 'blob_sweep_removed_total', 'orphan')).toBe(orphanSizes.length);
  expect(await metric(url, 'blob_sweep_removed_bytes_total', 'orphan')).toBe(
    orphanSizes.reduce((sum, size) => sum + size, 0),
  );

  for (const { id, bytes } of recorded) {
    const download = await fetch(`${url}/api/file-uploads/${id}/download/`, {
      headers: { Authorization: `Token ${user.token}` },
    });
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
  }
  // A sweep later, the blobs left are those of the recorded uploads.
  await sleep(1500);
  const stored: string[] = [];
  for await (const blob of blobs.list()) stored.push(blob.key);
  expect(stored).toHaveLength(recorded.length);
}, 120_000);
