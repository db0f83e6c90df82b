import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { uploadPreviewKey } from '#shared/domain/uploads/events';
import { createMetrics } from '#shared/metrics/metrics';
import type { EventStore } from '#shared/eventStore/eventStore';
import { eventually, waitFor } from '#tests/support/waitFor';
import { ProcessorFixture, checkHistory } from './support/processorFixture';
import { TEST_PREVIEW, flakyMarker, runsMarker } from './support/testInspector';

let fx: ProcessorFixture;

beforeEach(async () => {
  fx = await ProcessorFixture.create();
});
afterEach(async () => {
  await fx.close();
});

const dataOf = async (uploadId: string, type: string) =>
  (await fx.events(uploadId)).find((e) => e.type === type)?.data as Record<string, unknown> | undefined;

test('uploads end completed with the metadata, or failed with the reason; the preview is stored first', async () => {
  const metrics = createMetrics('processor-test');
  fx.startProcessor({}, { metrics });
  const good = await fx.receive('scan.nii', 'twelve bytes');
  const bad = await fx.receive('bad-scan.nii');
  const withPreview = await fx.receive('preview-scan.nii');
  await fx.waitUntilFinished([good, bad, withPreview]);

  expect(await fx.types(good)).toEqual([
    'UploadReceived',
    'UploadProcessingStarted',
    'UploadProcessingCompleted',
  ]);
  expect(await dataOf(good, 'UploadProcessingCompleted')).toMatchObject({
    attempt: 1,
    metadata: { format: 'test', bytes: 12 },
    previewBlobKey: null,
  });
  expect(await dataOf(bad, 'UploadProcessingFailed')).toMatchObject({
    attempt: 1,
    reason: 'not a test file: its name says bad',
  });
  expect(await dataOf(withPreview, 'UploadProcessingCompleted')).toMatchObject({
    previewBlobKey: uploadPreviewKey(withPreview),
  });
  const stored = await fx.blobs.get(uploadPreviewKey(withPreview));
  const chunks: Buffer[] = [];
  for await (const chunk of stored) chunks.push(chunk as Buffer);
  expect(Buffer.concat(chunks)).toEqual(TEST_PREVIEW);
  expect((await fx.blobs.stat(uploadPreviewKey(withPreview)))?.contentType).toBe('image/png');

  const text = await metrics.render();
  expect(text).toMatch(/upload_processing_total\{[^}]*outcome="completed"[^}]*\} 2/);
  expect(text).toMatch(/upload_processing_total\{[^}]*outcome="failed"[^}]*\} 1/);
  expect(text).toMatch(/upload_processing_duration_seconds_count\{[^}]*outcome="completed"[^}]*\} 2/);
  expect(text).toMatch(/supervised_loop_up\{[^}]*loop="upload_processor"[^}]*\} 1/);
});

test('two processors on one store: each upload is claimed once and processed once', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) ids.push(await fx.receive(`slow-${i % 3 === 0 ? 200 : 0}-scan-${i}.nii`));
  fx.startProcessor({ concurrency: 3 }, { processorId: 'first' });
  fx.startProcessor({ concurrency: 3 }, { processorId: 'second' });
  await fx.waitUntilFinished(ids);

  const by = new Map<string, number>();
  for (const id of ids) {
    const events = await fx.events(id);
    expect(checkHistory(events)).toEqual({ attempts: 1, outcome: 'UploadProcessingCompleted' });
    const processorId = String((events[1]!.data as { processorId: string }).processorId);
    by.set(processorId, (by.get(processorId) ?? 0) + 1);
  }
  expect([...by.values()].reduce((a, b) => a + b, 0)).toBe(12);
});

test('an upload left in processing by a dead processor is taken back once its lease runs out', async () => {
  const uploadId = await fx.receive('scan.nii');
  // A processor that claimed it and died: a Started whose lease has just run out, never renewed.
  await fx.claimedBy(uploadId, { attempt: 1, processorId: 'dead', leaseMs: 1500 }, 0n);
  fx.startProcessor({}, { processorId: 'alive' });
  await fx.waitUntilFinished([uploadId]);
  const events = await fx.events(uploadId);
  expect(checkHistory(events)).toEqual({ attempts: 2, outcome: 'UploadProcessingCompleted' });
  expect(events[2]!.data).toMatchObject({ attempt: 2, processorId: 'alive' });
});

test('a lease is renewed while processing outlasts it; nobody takes the upload meanwhile', async () => {
  const uploadId = await fx.receive('slow-3500-scan.nii');
  fx.startProcessor({ leaseSeconds: 1 }, { processorId: 'first' });
  fx.startProcessor({ leaseSeconds: 1 }, { processorId: 'second' });
  await fx.waitUntilFinished([uploadId]);
  const events = await fx.events(uploadId);
  expect(checkHistory(events)).toEqual({ attempts: 1, outcome: 'UploadProcessingCompleted' });
  expect(events.filter((e) => e.type === 'UploadProcessingLeaseRenewed').length).toBeGreaterThanOrEqual(2);
});

/** The inspection runs of a `runs-` file (see testInspector); the marker is removed. */
function runsOf(filename: string): number {
  try {
    return readFileSync(runsMarker(filename), 'utf8').split('\n').filter(Boolean).length;
  } finally {
    rmSync(runsMarker(filename), { force: true });
  }
}

test('an inspection past its time limit is stopped and fails the upload at once, run once, not retried', async () => {
  const metrics = createMetrics('processor-test');
  const filename = `slow-600000-runs-${randomUUID()}.nii`;
  const uploadId = await fx.receive(filename);
  fx.startProcessor({ timeoutSeconds: 2, maxAttempts: 3 }, { metrics });
  await fx.waitUntilFinished([uploadId], 30_000);
  expect(runsOf(filename)).toBe(1);
  expect(checkHistory(await fx.events(uploadId))).toEqual({ attempts: 1, outcome: 'UploadProcessingFailed' });
  const { reason } = (await dataOf(uploadId, 'UploadProcessingFailed')) as { reason: string };
  expect(reason).toMatch(
    /^processing was stopped after 2 s, the time allowed for a file of \d+ bytes, and was not retried/,
  );
  expect(reason).toMatch(/Check that it opens in an image viewer/);
  expect(await metrics.render()).toMatch(/upload_processing_timeouts_total\{[^}]*\} 1/);
});

test('the time limit is a base plus so much per GiB: a small file cannot run for the cap', async () => {
  const GIB = 1024 ** 3;
  // 1 s, plus 8 s for this 2 MiB file; at most 60 s.
  const limits = { timeoutSeconds: 60, timeoutBaseSeconds: 1, timeoutPerGibSeconds: 4096 };
  const small = await fx.receive('slow-3000-small.nii', Buffer.alloc(1024));
  const big = await fx.receive('slow-2000-big.nii', Buffer.alloc((2 * GIB) / 1024));
  fx.startProcessor(limits);
  await fx.waitUntilFinished([small, big], 30_000);
  expect(await dataOf(small, 'UploadProcessingFailed')).toMatchObject({
    reason: expect.stringMatching(
      /^processing was stopped after 1 s, the time allowed for a file of 1\.0 KB/,
    ) as unknown,
  });
  expect(await dataOf(big, 'UploadProcessingCompleted')).toMatchObject({
    metadata: { bytes: 2 * 1024 * 1024 },
  });
});

test('a worker that crashed is run again, up to the allowed runs', async () => {
  const filename = `crash-runs-${randomUUID()}.nii`;
  const uploadId = await fx.receive(filename);
  fx.startProcessor({ maxAttempts: 2 });
  await fx.waitUntilFinished([uploadId], 30_000);
  expect(runsOf(filename)).toBe(2);
  expect(await dataOf(uploadId, 'UploadProcessingFailed')).toMatchObject({
    attempt: 1,
    reason: expect.stringMatching(/^processing stopped unexpectedly \(exit code 7\) \(2 times\)/) as unknown,
  });
});

test('a worker over its memory limit ends the upload as failed, and the processor goes on', async () => {
  const hog = await fx.receive('hog-scan.nii');
  const next = await fx.receive('scan.nii');
  fx.startProcessor({ workerMemoryMb: 32, concurrency: 1 });
  await fx.waitUntilFinished([hog, next]);
  expect(await dataOf(hog, 'UploadProcessingFailed')).toMatchObject({
    reason: 'processing needed more than the 32 MB of memory it is allowed',
  });
  expect(await fx.types(next)).toContain('UploadProcessingCompleted');
});

test('a fault reading the source is retried with backoff (one warning), then the upload completes', async () => {
  const filename = `flaky-${randomUUID()}.nii`;
  const uploadId = await fx.receive(filename);
  fx.startProcessor();
  try {
    await fx.waitUntilFinished([uploadId]);
  } finally {
    rmSync(flakyMarker(filename), { force: true });
  }
  expect(checkHistory(await fx.events(uploadId))).toEqual({
    attempts: 1,
    outcome: 'UploadProcessingCompleted',
  });
  const warnings = fx.logLines.filter((line) => line.includes('meets a fault'));
  expect(warnings).toHaveLength(1);
  expect(fx.logLines.some((line) => line.includes('upload processing recovered'))).toBe(true);
});

test('an upload deleted while it is processed gets no outcome, and its preview is deleted', async () => {
  const uploadId = await fx.receive('preview-slow-1500-scan.nii');
  fx.startProcessor();
  await waitFor(
    'the upload to be claimed',
    async () => (await fx.types(uploadId)).includes('UploadProcessingStarted'),
    { timeoutMs: 30_000, intervalMs: 50 },
  );
  await fx.remove(uploadId);
  await waitFor(
    'the processor to log that it could not record the outcome',
    () => fx.logLines.some((line) => line.includes('could not record the outcome')),
    { timeoutMs: 30_000, intervalMs: 50, detail: () => fx.logLines.join('\n') },
  );
  expect(await fx.types(uploadId)).toEqual(['UploadReceived', 'UploadProcessingStarted', 'UploadDeleted']);
  // The processor logs the lost outcome first, then deletes the preview it had stored for it.
  await eventually('the preview of the deleted upload to be deleted', async () =>
    expect(await fx.blobs.stat(uploadPreviewKey(uploadId))).toBeUndefined(),
  );
});

test('a processor stopped mid-processing leaves the upload to the next one, which finishes it', async () => {
  const uploadId = await fx.receive('slow-1000-scan.nii');
  const first = fx.startProcessor({ leaseSeconds: 2 }, { processorId: 'first' });
  await waitFor(
    'the upload to be claimed',
    async () => (await fx.types(uploadId)).includes('UploadProcessingStarted'),
    { timeoutMs: 30_000, intervalMs: 50 },
  );
  await first.stop();
  expect(await fx.types(uploadId)).toEqual(['UploadReceived', 'UploadProcessingStarted']);
  fx.startProcessor({ leaseSeconds: 2 }, { processorId: 'second' });
  await fx.waitUntilFinished([uploadId]);
  const events = await fx.events(uploadId);
  expect(checkHistory(events)).toEqual({ attempts: 2, outcome: 'UploadProcessingCompleted' });
});

test('an event store that fails for a while: following and recording are retried, nothing is lost', async () => {
  const uploadId = await fx.receive('scan.nii');
  let storeDownFor = 2; // calls of headPosition: the store is down for the loop's first two rounds
  let outcomeFaults = 3;
  const flaky: EventStore = {
    ...fx.store,
    readStream: (name, options) => fx.store.readStream(name, options),
    readAll: (options) => fx.store.readAll(options),
    close: () => Promise.resolve(),
    headPosition() {
      if (storeDownFor-- > 0) return Promise.reject(new Error('connection refused'));
      return fx.store.headPosition();
    },
    subscribeToAll(options) {
      if (storeDownFor >= 0) throw new Error('connection refused');
      return fx.store.subscribeToAll(options);
    },
    appendToStream(name, events, options) {
      if (events[0]?.type === 'UploadProcessingCompleted' && outcomeFaults-- > 0)
        return Promise.reject(new Error('Connection terminated unexpectedly'));
      return fx.store.appendToStream(name, events, options);
    },
  };
  const processor = fx.startProcessor({}, { store: flaky });
  await fx.waitUntilFinished([uploadId]);
  expect(checkHistory(await fx.events(uploadId))).toEqual({
    attempts: 1,
    outcome: 'UploadProcessingCompleted',
  });
  expect(outcomeFaults).toBe(-1);
  // One warning for the loop's outage and one for the outcome's, each followed by one recovery line.
  expect(fx.logLines.filter((line) => line.includes('upload_processor failed; retrying'))).toHaveLength(1);
  expect(fx.logLines.filter((line) => line.includes('meets a fault'))).toHaveLength(1);
  expect(fx.logLines.filter((line) => line.includes('upload_processor recovered'))).toHaveLength(1);
  expect(fx.logLines.filter((line) => line.includes('upload processing recovered'))).toHaveLength(1);
  expect(processor.loop.status().state).toBe('up');
});

test('a processor that loses its claim to an attempt that then dies takes the upload back after that lease', async () => {
  const uploadId = await fx.receive('slow-2500-scan.nii');
  const noRenewals: EventStore = {
    ...fx.store,
    readStream: (name, options) => fx.store.readStream(name, options),
    readAll: (options) => fx.store.readAll(options),
    headPosition: () => fx.store.headPosition(),
    subscribeToAll: (options) => fx.store.subscribeToAll(options),
    close: () => Promise.resolve(),
    appendToStream(name, events, options) {
      if (events[0]?.type === 'UploadProcessingLeaseRenewed')
        return Promise.reject(new Error('Connection terminated unexpectedly'));
      return fx.store.appendToStream(name, events, options);
    },
  };
  fx.startProcessor({ leaseSeconds: 1 }, { store: noRenewals, processorId: 'survivor' });
  let started: { leaseUntil: string } | undefined;
  await waitFor(
    'the upload to be claimed',
    async () => {
      started = (await fx.events(uploadId)).find((e) => e.type === 'UploadProcessingStarted')?.data as
        { leaseUntil: string } | undefined;
      return started !== undefined;
    },
    { timeoutMs: 30_000, intervalMs: 50 },
  );
  // Attempt 1 could not renew: once its lease ran out, another processor claims it and dies at once.
  await waitFor('the lease to run out', () => Date.now() > Date.parse(started!.leaseUntil) + 50, {
    timeoutMs: 10_000,
    intervalMs: 50,
  });
  await fx.claimedBy(uploadId, { attempt: 2, processorId: 'dies-at-once', leaseMs: 2000 }, 1n);
  await fx.waitUntilFinished([uploadId], 60_000);
  const events = await fx.events(uploadId);
  expect(checkHistory(events)).toEqual({ attempts: 3, outcome: 'UploadProcessingCompleted' });
  expect(events.find((e) => e.type === 'UploadProcessingCompleted')?.data).toMatchObject({ attempt: 3 });
  expect(events[3]?.data).toMatchObject({ attempt: 3, processorId: 'survivor' });
});
