import { eventually, waitFor } from './waitFor';

test('returns the first value that is the one awaited', async () => {
  let tries = 0;
  expect(await waitFor('three tries', () => (++tries >= 3 ? tries : undefined), { intervalMs: 1 })).toBe(3);
  expect(await waitFor('an even count', () => ++tries, { intervalMs: 1, until: (n) => n % 2 === 0 })).toBe(4);
});

test('a probe that throws has not succeeded yet', async () => {
  let tries = 0;
  const value = await waitFor(
    'a probe that stops throwing',
    () => {
      if (++tries < 3) throw new Error('not yet');
      return 'done';
    },
    { intervalMs: 1 },
  );
  expect(value).toBe('done');
});

test('a timeout says what was awaited and the last value seen', async () => {
  await expect(
    waitFor('the count to reach 10', () => ({ count: 2 }), {
      timeoutMs: 30,
      intervalMs: 5,
      until: ({ count }) => count >= 10,
    }),
  ).rejects.toThrow('timed out after 30 ms waiting for the count to reach 10; last seen: { count: 2 }');
  await expect(
    waitFor('the log line', () => false, { timeoutMs: 10, detail: () => 'log: nothing yet' }),
  ).rejects.toThrow(/last seen: false\nlog: nothing yet$/);
});

test('eventually waits for assertions to pass and reports the last failure', async () => {
  let n = 0;
  await eventually('n to pass 2', () => expect(++n).toBeGreaterThan(2), { intervalMs: 1 });
  await expect(eventually('n to be 0', () => expect(n).toBe(0), { timeoutMs: 10 })).rejects.toThrow(
    /waiting for n to be 0; last seen: the error expect\(received\)\.toBe\(expected\)/,
  );
});
