import { AppendListener } from './appendListener';
import { sqlNames } from './sqlNames';

describe('AppendListener woken by an append of its own process', () => {
  const listener = () =>
    new AppendListener({ connectionString: 'postgres://unused' }, sqlNames('event_store'));

  test('a wait of an hour ends when an append committed here is announced', async () => {
    const l = listener();
    const waiting = l.wait(3_600_000, new AbortController().signal);
    l.appendCommitted();
    await expect(waiting).resolves.toBeUndefined();
    await l.close();
  });

  test('an announcement after reset() and before the wait is not lost; one before reset() is', async () => {
    const l = listener();
    l.appendCommitted();
    l.reset();
    let ended = false;
    const waiting = l.wait(3_600_000, new AbortController().signal).then(() => (ended = true));
    await Promise.resolve();
    expect(ended).toBe(false);
    l.reset();
    l.appendCommitted();
    await expect(l.wait(3_600_000, new AbortController().signal)).resolves.toBeUndefined();
    await l.close(); // ends the first wait too
    await waiting;
  });
});
