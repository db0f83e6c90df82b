import { waitFor } from '#tests/support/waitFor';
import { ProcessorFixture, isFinished } from './support/processorFixture';

/**
 * The real processor process (services/processor/main.ts) with one slot for uploads of any size,
 * as on a two-core machine: one user's long inspections must not hold back another user's uploads.
 */
let fx: ProcessorFixture;

beforeEach(async () => {
  fx = await ProcessorFixture.create();
});
afterEach(() => fx.close());

const USER_A = 1;
const USER_B = 2;
/** Over the 1 MB small-upload size the processor is started with. */
const BIG = Buffer.alloc(2 * 1024 * 1024, 7);
const ONE_KB = Buffer.alloc(1024, 1);

const spawnProcessor = (env: Record<string, string> = {}) =>
  fx.spawnProcessor({
    PROCESSOR_CONCURRENCY: '1',
    PROCESSOR_SMALL_UPLOAD_MB: '1',
    PROCESSOR_TIMEOUT_BASE_SECONDS: '300',
    ...env,
  });

const started = async (uploadId: string): Promise<boolean> =>
  (await fx.types(uploadId)).includes('UploadProcessingStarted');

const startedAt = async (uploadId: string): Promise<number> => {
  const event = (await fx.events(uploadId)).find((e) => e.type === 'UploadProcessingStarted');
  if (!event) throw new Error(`upload ${uploadId} was never started`);
  return Date.parse((event.data as { startedAt: string }).startedAt);
};

test("a 1 KB upload completes within 10 s while another user's long inspection holds the only slot", async () => {
  const a: string[] = [];
  for (let i = 0; i < 4; i++) a.push(await fx.receive(`slow-120000-a-${i}.nii`, BIG, USER_A));
  const processor = await spawnProcessor();
  await waitFor("the big upload's inspection to start", () => started(a[0]!), {
    timeoutMs: 30_000,
    intervalMs: 50,
    detail: () => processor.output(),
  });

  const received = Date.now();
  const b = await fx.receive('scan-b.nii', ONE_KB, USER_B);
  await waitFor('the 1 KB upload to finish', async () => isFinished(await fx.events(b)), {
    timeoutMs: 10_000,
    intervalMs: 50,
    detail: () => `the 1 KB upload was not finished 10 s after it was received\n${processor.output()}`,
  });
  const waited = Date.now() - received;
  expect(await fx.types(b)).toEqual([
    'UploadReceived',
    'UploadProcessingStarted',
    'UploadProcessingCompleted',
  ]);
  expect(waited).toBeLessThan(10_000);
  // A's first inspection is still running, and A's other uploads still wait for the slot.
  expect(isFinished(await fx.events(a[0]!))).toBe(false);
  for (const id of a.slice(1)) expect(await started(id)).toBe(false);
  // What an operator sees (once the processor has taken B's slot back): one big upload running in
  // the slot of any size, A's three others waiting.
  const expected = [
    /upload_processing_running\{[^}]*lane="any"[^}]*\} 1\n/,
    /upload_processing_running\{[^}]*lane="small"[^}]*\} 0\n/,
    /upload_processing_waiting\{[^}]*size="large"[^}]*\} 3\n/,
    /upload_processing_waiting\{[^}]*size="small"[^}]*\} 0\n/,
  ];
  let metrics = '';
  await waitFor(
    '/metrics/ to show the queue',
    async () => {
      metrics = await fetch(`${processor.url}/metrics/`).then((res) => res.text());
      return expected.every((line) => line.test(metrics));
    },
    {
      timeoutMs: 5_000,
      intervalMs: 50,
      detail: () =>
        `metrics never showed the queue: ${metrics
          .split('\n')
          .filter((l) => l.startsWith('upload_'))
          .join('\n')}`,
    },
  );
});

test('uploaders take turns at the slot: one who queued several first does not go before the next one twice', async () => {
  const a: string[] = [];
  for (let i = 0; i < 3; i++) a.push(await fx.receive(`slow-2000-a-${i}.nii`, BIG, USER_A));
  const b = await fx.receive('slow-2000-b.nii', BIG, USER_B);
  const processor = await spawnProcessor();
  await fx.waitUntilFinished([...a, b], 60_000).catch((error: Error) => {
    throw new Error(`${error.message}\n${processor.output()}`);
  });
  const times = new Map<string, number>();
  for (const id of [...a, b]) times.set(id, await startedAt(id));
  // A's first upload came first; B's goes next, before A's second and third.
  expect(times.get(b)!).toBeGreaterThan(times.get(a[0]!)!);
  expect(times.get(b)!).toBeLessThan(times.get(a[1]!)!);
  expect(times.get(b)!).toBeLessThan(times.get(a[2]!)!);
});
