import type { Pool } from 'pg';
import { ReadModelPosition } from './readModelPosition';

/** A pool whose checkpoint reads answer when the test says, with the position it sets. */
function fakePool() {
  const pending: (() => void)[] = [];
  let commit = 1;
  const pool = {
    query: () =>
      new Promise((resolve) => {
        const answerWith = commit;
        pending.push(() =>
          resolve({
            rows: [
              {
                projection: 'p',
                version: 1,
                status: 'live',
                commit_position: String(answerWith),
                prepare_position: String(answerWith),
              },
              {
                projection: 'q',
                version: 1,
                status: 'building',
                commit_position: '0',
                prepare_position: '0',
              },
            ],
          }),
        );
      }),
  } as unknown as Pool;
  return {
    pool,
    queries: () => pending.length,
    commitTo: (n: number) => (commit = n),
    answerNext: async () => {
      pending.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

test('asks during a read in flight share the next read, which starts after it', async () => {
  const db = fakePool();
  const position = new ReadModelPosition(db.pool);
  const first = position.read();
  db.commitTo(2); // committed after the first read was sent: later asks must see it
  const second = position.read();
  const third = position.read();
  expect(db.queries()).toBe(1);
  await db.answerNext();
  expect((await first).commit).toBe(1n);
  expect(db.queries()).toBe(1); // the queued read is now in flight
  await db.answerNext();
  expect((await second).commit).toBe(2n);
  expect((await third).commit).toBe(2n);
  expect(db.queries()).toBe(0);
});

test('only live read models count', async () => {
  const db = fakePool();
  const read = new ReadModelPosition(db.pool).read();
  await db.answerNext();
  expect((await read).commit).toBe(1n);
});
