import { createLogger } from '#shared/logging/logger';
import { closeInOrder } from './closeInOrder';

function recordingLogger() {
  const lines: { level: string; msg: string; step?: string }[] = [];
  const logger = createLogger({
    service: 'test',
    level: 'debug',
    sink: (line) => lines.push(JSON.parse(line) as (typeof lines)[number]),
  });
  return { logger, lines };
}

const never = () => new Promise<void>(() => undefined);
/** Records a step as done, after a turn of the event loop. */
const note = async (done: string[], step: string) => {
  await wait(1);
  done.push(step);
};
const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('closeInOrder', () => {
  test('runs the steps in order, each after the previous one finished', async () => {
    const { logger, lines } = recordingLogger();
    const done: string[] = [];
    await closeInOrder(logger, [
      [
        'server',
        async () => {
          await wait(20);
          done.push('server');
        },
      ],
      ['loops', () => note(done, 'loops')],
      ['pool', () => note(done, 'pool')],
    ]);
    expect(done).toEqual(['server', 'loops', 'pool']);
    expect(lines).toEqual([]);
  });

  test('a failed step is logged by name, the later steps still run, and the first failure is thrown', async () => {
    const { logger, lines } = recordingLogger();
    const done: string[] = [];
    const first = new Error('pool is gone');
    const closing = closeInOrder(logger, [
      ['loops', () => Promise.reject(first)],
      ['search', () => Promise.reject(new Error('search is gone'))],
      ['pool', () => note(done, 'pool')],
    ]);
    await expect(closing).rejects.toBe(first);
    expect(done).toEqual(['pool']);
    expect(lines.map((line) => [line.level, line.msg, line.step])).toEqual([
      ['error', 'a shutdown step failed', 'loops'],
      ['error', 'a shutdown step failed', 'search'],
    ]);
  });

  test('a step that does not finish is named in the log while the shutdown waits for it', async () => {
    const { logger, lines } = recordingLogger();
    void closeInOrder(logger, [['stuck loop', never]], 20);
    await wait(100);
    expect(lines).toEqual([
      expect.objectContaining({ level: 'error', msg: 'shutdown is waiting for a step', step: 'stuck loop' }),
    ]);
  });

  test('nothing is logged for a step that finishes in time', async () => {
    const { logger, lines } = recordingLogger();
    await closeInOrder(logger, [['quick', () => wait(5)]], 1000);
    await wait(20);
    expect(lines).toEqual([]);
  });
});
