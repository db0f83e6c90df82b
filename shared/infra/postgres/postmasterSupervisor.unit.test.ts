import { waitFor } from '#tests/support/waitFor';
import type { Postmaster, PostmasterExit } from './postmaster';
import { PostmasterSupervisor } from './postmasterSupervisor';

/** A stand-in postmaster whose death the test decides. */
class FakePostmaster implements Postmaster {
  private die: (exit: PostmasterExit) => void = () => undefined;
  readonly exited = new Promise<PostmasterExit>((resolve) => (this.die = resolve));
  stopped = false;
  constructor(readonly pid: number) {}
  crash(): void {
    this.die({ code: null, signal: 'SIGKILL' });
  }
  stop(): Promise<void> {
    this.stopped = true;
    this.die({ code: 0, signal: null });
    return Promise.resolve();
  }
}

/** Scripted starts: each entry is a postmaster to hand out, or an error for a failed start. */
function harness(script: (FakePostmaster | Error)[]) {
  const lines: { level: string; message: string }[] = [];
  const gaveUp: Error[] = [];
  const started: FakePostmaster[] = [];
  const supervisor = new PostmasterSupervisor({
    start: () => {
      const next = script.shift();
      if (!next) return Promise.reject(new Error('script exhausted'));
      if (next instanceof Error) return Promise.reject(next);
      started.push(next);
      return Promise.resolve(next);
    },
    policy: { maxFailures: 4, windowMs: 60_000, initialDelayMs: 1, maxDelayMs: 5 },
    logger: {
      info: (message) => lines.push({ level: 'info', message }),
      error: (message) => lines.push({ level: 'error', message }),
    },
    onGiveUp: (error) => gaveUp.push(error),
  });
  return { supervisor, lines, gaveUp, started };
}

test('a postmaster that dies is restarted: one log line for the outage, one for the recovery', async () => {
  const first = new FakePostmaster(101);
  const { supervisor, lines, started } = harness([
    first,
    new Error('shared memory still in use'),
    new Error('shared memory still in use'),
    new FakePostmaster(102),
  ]);
  await supervisor.start();
  expect(supervisor.state()).toBe('running');
  expect(supervisor.pid()).toBe(101);

  first.crash();
  await waitFor('the restarting state', () => supervisor.state(), {
    intervalMs: 5,
    until: (state) => state === 'restarting',
  });
  await waitFor('the running state', () => supervisor.state(), {
    intervalMs: 5,
    until: (state) => state === 'running',
  });
  expect(supervisor.pid()).toBe(102);
  expect(started.map((p) => p.pid)).toEqual([101, 102]);
  expect(lines).toEqual([
    { level: 'error', message: 'embedded PostgreSQL exited unexpectedly; restarting it' },
    { level: 'info', message: 'embedded PostgreSQL is back' },
  ]);
  await supervisor.stop();
  expect(supervisor.state()).toBe('stopped');
});

test('gives up after the policy allows no more failures, and says so once', async () => {
  const first = new FakePostmaster(201);
  const { supervisor, lines, gaveUp } = harness([
    first,
    new Error('boom'),
    new Error('boom'),
    new Error('boom'),
  ]);
  await supervisor.start();
  first.crash();
  await waitFor('the failed state', () => supervisor.state(), {
    intervalMs: 5,
    until: (state) => state === 'failed',
  });
  expect(gaveUp).toHaveLength(1);
  expect(gaveUp[0]!.message).toMatch(/failed 4 times .* last failure: boom/);
  expect(lines.map((l) => l.message)).toEqual([
    'embedded PostgreSQL exited unexpectedly; restarting it',
    'embedded PostgreSQL could not be restarted; giving up',
  ]);
  await supervisor.stop();
});

test('stopping on purpose is not an outage', async () => {
  const only = new FakePostmaster(301);
  const { supervisor, lines, started } = harness([only, new FakePostmaster(302)]);
  await supervisor.start();
  await supervisor.stop();
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(only.stopped).toBe(true);
  expect(started).toHaveLength(1);
  expect(lines).toEqual([]);
  expect(supervisor.state()).toBe('stopped');
});
