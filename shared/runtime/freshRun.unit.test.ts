import { FreshRun } from './freshRun';

/** A run whose end the test decides: each call is numbered, and resolves when told. */
function controlledRuns() {
  const pending: ((value: number) => void)[] = [];
  let started = 0;
  const run = (): Promise<number> => {
    const n = ++started;
    return new Promise((resolve) => pending.push(() => resolve(n)));
  };
  return { run, finishNext: () => pending.shift()?.(0), started: () => started };
}

test('an ask during a run waits for the next run; asks arriving together share one', async () => {
  const runs = controlledRuns();
  const fresh = new FreshRun(runs.run);
  const first = fresh.ask();
  const second = fresh.ask();
  const third = fresh.ask();
  expect(runs.started()).toBe(1);
  runs.finishNext();
  await expect(first).resolves.toBe(1);
  // The second and third asked while run 1 was in flight: they share run 2, started after it.
  await new Promise((resolve) => setImmediate(resolve));
  expect(runs.started()).toBe(2);
  runs.finishNext();
  await expect(second).resolves.toBe(2);
  await expect(third).resolves.toBe(2);
});

test('a failed run fails its askers only; the queued ask still gets a run of its own', async () => {
  let calls = 0;
  const fresh = new FreshRun(() =>
    ++calls === 1 ? Promise.reject(new Error('down')) : Promise.resolve(calls),
  );
  const failed = fresh.ask();
  const next = fresh.ask();
  await expect(failed).rejects.toThrow('down');
  await expect(next).resolves.toBe(2);
});
