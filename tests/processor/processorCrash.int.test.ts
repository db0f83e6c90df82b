import { waitFor } from '#tests/support/waitFor';
import { ProcessorFixture, checkHistory, isFinished } from './support/processorFixture';

/** The real processor process (services/processor/main.ts) on the fixture's database and blobs. */
let fx: ProcessorFixture;

beforeEach(async () => {
  fx = await ProcessorFixture.create();
});
afterEach(() => fx.close());

const spawnProcessor = () => fx.spawnProcessor({ PROCESSOR_LEASE_SECONDS: '2', PROCESSOR_CONCURRENCY: '2' });

async function histories(ids: readonly string[]) {
  return Promise.all(ids.map(async (id) => checkHistory(await fx.events(id))));
}

test('SIGKILL mid-processing, then a restart: every upload ends completed or failed, none twice', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) ids.push(await fx.receive(`${i === 5 ? 'bad-' : ''}slow-1500-scan-${i}.nii`));
  const first = await spawnProcessor();
  // Killed while at least one upload is claimed and not finished: its worker dies with the process.
  await waitFor(
    'an upload claimed and not finished',
    async () => {
      for (const id of ids) {
        const events = await fx.events(id);
        if (events.some((e) => e.type === 'UploadProcessingStarted') && !isFinished(events)) return true;
      }
      return false;
    },
    { timeoutMs: 60_000, intervalMs: 50, detail: () => first.output() },
  );
  await first.kill();
  const interrupted: string[] = [];
  for (const id of ids) {
    const events = await fx.events(id);
    if (events.some((e) => e.type === 'UploadProcessingStarted') && !isFinished(events)) interrupted.push(id);
  }
  expect(interrupted.length).toBeGreaterThan(0);

  const second = await spawnProcessor();
  await fx.waitUntilFinished(ids, 120_000).catch((error: Error) => {
    throw new Error(`${error.message}\n${second.output()}`);
  });
  // checkHistory throws on a second outcome, an attempt started under a live lease, or anything after the outcome.
  const results = await histories(ids);
  expect(results.map((r) => r.outcome)).toEqual([
    ...Array<string>(5).fill('UploadProcessingCompleted'),
    'UploadProcessingFailed',
  ]);
  for (const id of interrupted) expect(results[ids.indexOf(id)]!.attempts).toBe(2);
});

test('two processor processes on one store: each upload is processed exactly once', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) ids.push(await fx.receive(`slow-300-scan-${i}.nii`));
  await Promise.all([spawnProcessor(), spawnProcessor()]);
  await fx.waitUntilFinished(ids, 120_000);
  const results = await histories(ids);
  expect(results).toEqual(Array(10).fill({ attempts: 1, outcome: 'UploadProcessingCompleted' }));
  for (const id of ids)
    expect((await fx.events(id)).filter((e) => e.type === 'UploadProcessingStarted')).toHaveLength(1);
});
