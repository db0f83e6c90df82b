import { mkdtempSync, rmSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createLocalDiskBlobStore } from '#shared/blobStore/localDisk/createLocalDiskBlobStore';
import type { InspectionOutcome, Inspector, ProcessingJob } from '#services/processor/inspection';
import { type WorkerInspectorOptions, workerInspector } from '#services/processor/workerInspector';
import { TEST_INSPECTOR } from './support/processorFixture';

const dataDir = mkdtempSync(path.join(tmpdir(), 'worker-pool-'));
const rootDir = path.join(dataDir, 'blobs');
const blobs = createLocalDiskBlobStore({ rootDir });
const inspectors: Inspector[] = [];
afterAll(async () => {
  await Promise.all(inspectors.map((inspector) => inspector.close()));
  rmSync(dataDir, { recursive: true, force: true });
});

function pool(options: Partial<WorkerInspectorOptions> = {}): Inspector {
  const inspector = workerInspector({
    blobs: { kind: 'local', rootDir },
    inspectorModule: TEST_INSPECTOR,
    timeLimitMs: () => 30_000,
    memoryMb: 64,
    nice: 0,
    ...options,
  });
  inspectors.push(inspector);
  return inspector;
}

let n = 0;
/** Stores a small file and names it so the test inspector behaves as the prefix says. */
async function upload(prefix: string): Promise<ProcessingJob> {
  const blobKey = `pool-${n++}`;
  const stored = await blobs.put(blobKey, Readable.from([Buffer.from('some bytes')]));
  return { uploadId: blobKey, blobKey, filename: `${prefix}-${blobKey}.bin`, sizeBytes: stored.size };
}

const running = () => new AbortController().signal;

/** The worker thread that inspected a `thread-` upload. */
function threadOf(outcome: InspectionOutcome): number {
  if (outcome.kind !== 'inspected' || !outcome.inspection.ok)
    throw new Error(`not inspected: ${JSON.stringify(outcome)}`);
  return outcome.inspection.metadata.thread as number;
}

const inspectThread = async (inspector: Inspector) =>
  threadOf(await inspector.inspect(await upload('thread'), running()));

test('one worker thread inspects upload after upload', async () => {
  const inspector = pool();
  const threads = [];
  for (let i = 0; i < 4; i++) threads.push(await inspectThread(inspector));
  expect(new Set(threads).size).toBe(1);
});

test('the worker threads run at the nice value asked for, the caller at its own', async () => {
  const job = await upload('thread');
  for (const nice of [10, 19]) {
    const outcome = await pool({ nice }).inspect(job, running());
    expect(outcome).toMatchObject({ inspection: { metadata: { nice } } });
  }
  expect(getPriority()).toBe(0);
});

test('inspections at the same time run in worker threads of their own', async () => {
  const inspector = pool();
  const slow = await Promise.all([upload('slow-300-thread'), upload('slow-300-thread')]);
  const outcomes = await Promise.all(slow.map((job) => inspector.inspect(job, running())));
  expect(new Set(outcomes.map(threadOf)).size).toBe(2);
});

test('a worker is replaced after its allowed number of inspections', async () => {
  const inspector = pool({ jobsPerWorker: 2 });
  const threads = [];
  for (let i = 0; i < 5; i++) threads.push(await inspectThread(inspector));
  expect(threads[0]).toBe(threads[1]);
  expect(threads[2]).toBe(threads[3]);
  expect(new Set([threads[0], threads[2], threads[4]]).size).toBe(3);
});

test('a worker idle for too long is ended; the next upload gets a new one', async () => {
  const inspector = pool({ idleMs: 500 });
  // Stored beforehand: on busy cores a blob write between two inspections can outlast a short idle time.
  const [a, b, c] = [await upload('thread'), await upload('thread'), await upload('thread')];
  const first = threadOf(await inspector.inspect(a, running()));
  expect(threadOf(await inspector.inspect(b, running()))).toBe(first);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  expect(threadOf(await inspector.inspect(c, running()))).not.toBe(first);
});

test('a timed-out worker is terminated and never reused', async () => {
  // Long enough for a new worker to start (a test's worker loads tsx first).
  const inspector = pool({ timeLimitMs: () => 2000 });
  const before = await inspectThread(inspector);
  expect(await inspector.inspect(await upload('slow-60000'), running())).toEqual({
    kind: 'timed_out',
    seconds: 2,
  });
  expect(await inspectThread(inspector)).not.toBe(before);
});

test("a new worker's start does not count against an upload's time limit", async () => {
  // A test's worker loads tsx and the inspector first: far longer than this limit.
  const inspector = pool({ timeLimitMs: () => 200 });
  expect(await inspector.inspect(await upload('slow-50'), running())).toMatchObject({ kind: 'inspected' });
  expect(await inspector.inspect(await upload('slow-600000'), running())).toEqual({
    kind: 'timed_out',
    seconds: 0.2,
  });
});

test('a worker that cannot start in time ends the inspection as a crash that may go otherwise', async () => {
  const inspector = pool({ startupMs: 1 });
  expect(await inspector.inspect(await upload('thread'), running())).toEqual({
    kind: 'crashed',
    reason: 'processing could not start within 0.001 s (the processor is overloaded)',
    again: true,
  });
});

test('a worker over its heap limit fails that upload only; the next upload gets a new worker', async () => {
  const inspector = pool();
  const before = await inspectThread(inspector);
  expect(await inspector.inspect(await upload('hog'), running())).toEqual({
    kind: 'crashed',
    reason: 'processing needed more than the 64 MB of memory it is allowed',
    again: false,
  });
  expect(await inspectThread(inspector)).not.toBe(before);
});

test('a stop ends the inspection in progress; the worker is not reused', async () => {
  const inspector = pool();
  const before = await inspectThread(inspector);
  const stop = new AbortController();
  const inspecting = inspector.inspect(await upload('slow-5000'), stop.signal);
  setTimeout(() => stop.abort(), 100);
  expect(await inspecting).toEqual({ kind: 'aborted' });
  expect(await inspectThread(inspector)).not.toBe(before);
});

test('close ends the idle workers and waits for a busy one; later inspections are refused', async () => {
  const inspector = pool();
  await inspectThread(inspector);
  const busy = inspector.inspect(await upload('slow-300'), running());
  await new Promise((resolve) => setTimeout(resolve, 50));
  let closed = false;
  const closing = inspector.close().then(() => (closed = true));
  expect((await busy).kind).toBe('inspected');
  await closing;
  expect(closed).toBe(true);
  expect(await inspector.inspect(await upload('thread'), running())).toEqual({ kind: 'aborted' });
});
