import type { Pool } from 'pg';
import { parseSearchText } from '../searchText';
import { createTextSearch } from './textSearch';

interface FakeDatabase {
  /** The layout of the generation the views point at. */
  live: 2 | 3;
  /** Refuses the v3 statement whatever the layout (as a statement naming a wrong column would). */
  v3Broken?: boolean;
  /** Runs after the v3 statement is refused, before the next statement (a swap in between). */
  afterRefusal?: () => void;
  /** Fails every statement with this code instead. */
  failWith?: string;
}

/** A pool answering as PostgreSQL would for the live layout; `sent` lists the statements' layouts. */
function fakePool(db: FakeDatabase) {
  const sent: (2 | 3)[] = [];
  const pool = {
    query: ({ text }: { text: string }) => {
      const layout = text.includes('v3_live') ? 2 : 3;
      sent.push(layout);
      const fail = (code: string) => Promise.reject(Object.assign(new Error(`failed: ${code}`), { code }));
      if (db.failWith) return fail(db.failWith);
      if (layout === 3 && (db.live === 2 || db.v3Broken)) {
        db.afterRefusal?.();
        return fail(db.v3Broken ? '42703' : '42P01');
      }
      return Promise.resolve({
        rows: [{ answeredBy: layout, ...(layout === 2 ? { v3_live: db.live === 3 } : {}) }],
      });
    },
  } as unknown as Pool;
  const textSearch = createTextSearch(pool, { documents: 'public."docs"', words: 'public."docs_words"' });
  const search = async () => {
    const rows = await textSearch<{ answeredBy: number }>(
      { text: 'cortex', limit: 10, offset: 0 },
      parseSearchText('cortex')!,
    );
    return rows[0]?.answeredBy;
  };
  return { sent, search };
}

test('with the v3 layout live, each search is the one v3 statement', async () => {
  const { sent, search } = fakePool({ live: 3 });

  expect([await search(), await search(), await search()]).toEqual([3, 3, 3]);
  expect(sent).toEqual([3, 3, 3]);
});

test('with v2 live, one refused v3 statement, then v2 statements only; the first search after the swap returns to v3', async () => {
  const db: FakeDatabase = { live: 2 };
  const { sent, search } = fakePool(db);

  expect([await search(), await search(), await search()]).toEqual([2, 2, 2]);
  expect(sent).toEqual([3, 2, 2, 2]);

  db.live = 3;
  sent.length = 0;
  expect([await search(), await search()]).toEqual([2, 3]);
  expect(sent).toEqual([2, 3]);
});

test('a swap between the refused v3 statement and the v2 one: the v3 statement again answers', async () => {
  const db: FakeDatabase = { live: 2 };
  db.afterRefusal = () => (db.live = 3);
  const { sent, search } = fakePool(db);

  expect(await search()).toBe(3);
  expect(sent).toEqual([3, 2, 3]);
});

test('a v3 statement refused while the views are v3 is a fault of the statement: its error is the answer', async () => {
  const { sent, search } = fakePool({ live: 3, v3Broken: true });

  await expect(search()).rejects.toMatchObject({ code: '42703' });
  expect(sent).toEqual([3, 2, 3]);
});

test('any other error is the answer at once, without the v2 statement', async () => {
  const { sent, search } = fakePool({ live: 3, failWith: '57014' });

  await expect(search()).rejects.toMatchObject({ code: '57014' });
  expect(sent).toEqual([3]);
});
