import { backoffDelay } from './backoff';
import { type LoopBody, startSupervisedLoop, type SupervisedLoopOptions } from './supervisedLoop';

/**
 * A clock that only moves when the loop sleeps, and a log of those sleeps. Each sleep still yields
 * to the event loop once, so a failing body cannot starve the test.
 */
function fakeTime() {
  const time = { now: 1_000_000, delays: [] as number[] };
  const sleep = (ms: number): Promise<void> => {
    time.delays.push(ms);
    time.now += ms;
    return new Promise<void>((resolve) => setImmediate(resolve));
  };
  return { time, now: () => time.now, sleep };
}

function recorder() {
  const lines: { level: string; message: string; fields: Record<string, unknown> | undefined }[] = [];
  const logger = {
    info: (message: string, fields?: Record<string, unknown>) =>
      lines.push({ level: 'info', message, fields }),
    warn: (message: string, fields?: Record<string, unknown>) =>
      lines.push({ level: 'warn', message, fields }),
  };
  const gauge: boolean[] = [];
  let failures = 0;
  const metrics = {
    setLoopUp: (_loop: string, up: boolean) => gauge.push(up),
    loopFailed: () => void (failures += 1),
  };
  return { lines, logger, metrics, gauge, failures: () => failures };
}

/** Resolves when the signal aborts: a body that is up and working. */
const untilStopped = (signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));

async function eventually(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !condition(); i++) await new Promise((r) => setImmediate(r));
  expect(condition()).toBe(true);
}

function loopWith(body: (loop: LoopBody) => Promise<void>, extra: Partial<SupervisedLoopOptions> = {}) {
  const clock = fakeTime();
  const rec = recorder();
  const loop = startSupervisedLoop({
    name: 'test_loop',
    body,
    logger: rec.logger,
    metrics: rec.metrics,
    now: clock.now,
    sleep: clock.sleep,
    random: () => 0,
    ...extra,
  });
  return { loop, ...clock, ...rec };
}

test('the backoff doubles from the initial delay up to the cap', async () => {
  const { loop, time } = loopWith(() => Promise.reject(new Error('ECONNREFUSED')), {
    backoff: { initialMs: 100, maxMs: 1000 },
  });
  await eventually(() => time.delays.length >= 7);
  await loop.stop();
  expect(time.delays.slice(0, 7)).toEqual([100, 200, 400, 800, 1000, 1000, 1000]);
});

test('jitter takes a random share off each delay, within the configured fraction', () => {
  const backoff = { initialMs: 100, maxMs: 1000, jitter: 0.5 };
  expect(backoffDelay(backoff, 3, () => 0)).toBe(400);
  expect(backoffDelay(backoff, 3, () => 0.5)).toBe(300);
  expect(backoffDelay(backoff, 3, () => 0.999)).toBe(200);
  expect(backoffDelay(backoff, 50, () => 0)).toBe(1000);
  expect(backoffDelay({ ...backoff, jitter: 0 }, 3, () => 0.9)).toBe(400);
});

test('an outage logs one warning with the first error, and one info line when it ends', async () => {
  let calls = 0;
  const { loop, lines, gauge, failures } = loopWith(
    async ({ signal, up }) => {
      calls += 1;
      if (calls <= 5) throw new Error(`refused #${calls}`);
      up();
      await untilStopped(signal);
    },
    { backoff: { initialMs: 100, maxMs: 1000, jitter: 0 } },
  );
  await eventually(() => loop.status().state === 'up');
  expect(lines).toEqual([
    {
      level: 'warn',
      message: 'test_loop failed; retrying with backoff',
      fields: { loop: 'test_loop', error: 'refused #1' },
    },
    {
      level: 'info',
      message: 'test_loop recovered',
      // 100 + 200 + 400 + 800 + 1000 ms of backoff, on the injected clock
      fields: { loop: 'test_loop', outage_seconds: 2.5, attempts: 5 },
    },
  ]);
  expect(failures()).toBe(5);
  expect(gauge[gauge.length - 1]).toBe(true);
  await loop.stop();
  expect(gauge[gauge.length - 1]).toBe(false);
});

test('the status names the outage while it lasts and clears once the body is up again', async () => {
  let release: (() => void) | undefined;
  let calls = 0;
  const clock = fakeTime();
  const loop = startSupervisedLoop({
    name: 'gated',
    now: clock.now,
    random: () => 0,
    // The second backoff wait holds until the test releases it, so the state can be observed.
    sleep: (ms) => {
      clock.time.delays.push(ms);
      clock.time.now += ms;
      return clock.time.delays.length === 2
        ? new Promise<void>((r) => (release = r))
        : new Promise<void>((r) => setImmediate(r));
    },
    body: async ({ signal, up }) => {
      calls += 1;
      if (calls <= 2) throw new Error('connection terminated');
      up();
      await untilStopped(signal);
    },
  });
  expect(loop.status().state).toBe('starting');
  await eventually(() => release !== undefined);
  expect(loop.status()).toMatchObject({ state: 'retrying', attempts: 2, lastError: 'connection terminated' });
  release!();
  await eventually(() => loop.status().state === 'up');
  expect(loop.status()).toMatchObject({ attempts: 0, lastError: undefined });
  await loop.stop();
  expect(loop.status().state).toBe('stopped');
});

test('a body that fails again soon after each recovery keeps backing off', async () => {
  let calls = 0;
  const { loop, time } = loopWith(
    ({ up }) => {
      calls += 1;
      up();
      return Promise.reject(new Error(`poison #${calls}`));
    },
    { backoff: { initialMs: 100, maxMs: 1000, jitter: 0 } },
  );
  await eventually(() => time.delays.length >= 5);
  await loop.stop();
  expect(time.delays.slice(0, 5)).toEqual([100, 200, 400, 800, 1000]);
});

test('stop() aborts the running body and waits for it to return', async () => {
  let returned = false;
  const { loop } = loopWith(async ({ signal, up }) => {
    up();
    await untilStopped(signal);
    await Promise.resolve();
    returned = true;
  });
  await eventually(() => loop.status().state === 'up');
  await loop.stop();
  expect(returned).toBe(true);
  expect(loop.status().state).toBe('stopped');
});

test('stop() ends a backoff wait at once (real timers)', async () => {
  const loop = startSupervisedLoop({
    name: 'slow_retry',
    backoff: { initialMs: 60_000, maxMs: 60_000 },
    body: () => Promise.reject(new Error('down')),
  });
  await eventually(() => loop.status().state === 'retrying');
  await loop.stop();
  expect(loop.status().state).toBe('stopped');
});

test('wake() cuts a backoff wait short, at most once per initial delay', async () => {
  let calls = 0;
  let clock = 0;
  const loop = startSupervisedLoop({
    name: 'woken',
    now: () => clock,
    backoff: { initialMs: 60_000, maxMs: 60_000 },
    body: async ({ signal, up }) => {
      calls += 1;
      if (calls === 1) throw new Error('down');
      up();
      await untilStopped(signal);
    },
  });
  await eventually(() => loop.status().state === 'retrying');
  loop.wake(); // too soon after the failed attempt: ignored
  await new Promise((r) => setTimeout(r, 20));
  expect(loop.status().state).toBe('retrying');
  clock += 60_000;
  loop.wake();
  await eventually(() => loop.status().state === 'up');
  await loop.stop();
});
