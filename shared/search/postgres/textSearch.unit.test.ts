import type { Pool } from 'pg';
import { parseSearchText } from '#shared/search/searchText';
import { createTextSearch } from './textSearch';

interface FakeDatabase {
  /** The layout of the generation the views point at. */
  live: 3 | 4;
  /** Refuses the v4 statement whatever the layout (as a statement naming a wrong column would). */
  v4Broken?: boolean;
  /** Runs after the v4 statement is refused, before the next statement (a swap in between). */
  afterRefusal?: () => void;
  /** Fails every statement with this code instead. */
  failWith?: string;
}

/** A pool answering as PostgreSQL would for the live layout; `sent` lists the statements' layouts. */
function fakePool(db: FakeDatabase) {
  const sent: (3 | 4)[] = [];
  const pool = {
    query: ({ text }: { text: string }) => {
      const layout = text.includes('v4_live') ? 3 : 4;
      sent.push(layout);
      const fail = (code: string) => Promise.reject(Object.assign(new Error(`failed: ${code}`), { code }));
      if (db.failWith) return fail(db.failWith);
      if (layout === 4 && (db.live === 3 || db.v4Broken)) {
        db.afterRefusal?.();
        return fail(db.v4Broken ? '42703' : '42P01');
      }
      return Promise.resolve({
        rows: [{ answeredBy: layout, ...(layout === 3 ? { v4_live: db.live === 4 } : {}) }],
      });
    },
  } as unknown as Pool;
  const textSearch = createTextSearch(pool, {
    documents: 'public."docs"',
    words: 'public."docs_words"',
    lexemes: 'public."docs_lexemes"',
  });
  const search = async () => {
    const rows = await textSearch<{ answeredBy: number }>(
      { text: 'cortex', limit: 10, offset: 0 },
      parseSearchText('cortex')!,
    );
    return rows[0]?.answeredBy;
  };
  return { sent, search };
}

test('with the v4 layout live, each search is the one v4 statement', async () => {
  const { sent, search } = fakePool({ live: 4 });

  expect([await search(), await search(), await search()]).toEqual([4, 4, 4]);
  expect(sent).toEqual([4, 4, 4]);
});

test('with v3 live, one refused v4 statement, then v3 statements only; the first search after the swap returns to v4', async () => {
  const db: FakeDatabase = { live: 3 };
  const { sent, search } = fakePool(db);

  expect([await search(), await search(), await search()]).toEqual([3, 3, 3]);
  expect(sent).toEqual([4, 3, 3, 3]);

  db.live = 4;
  sent.length = 0;
  expect([await search(), await search()]).toEqual([3, 4]);
  expect(sent).toEqual([3, 4]);
});

test('a swap between the refused v4 statement and the v3 one: the v4 statement again answers', async () => {
  const db: FakeDatabase = { live: 3 };
  db.afterRefusal = () => (db.live = 4);
  const { sent, search } = fakePool(db);

  expect(await search()).toBe(4);
  expect(sent).toEqual([4, 3, 4]);
});

test('a v4 statement refused while the views are v4 is a fault of the statement: its error is the answer', async () => {
  const { sent, search } = fakePool({ live: 4, v4Broken: true });

  await expect(search()).rejects.toMatchObject({ code: '42703' });
  expect(sent).toEqual([4, 3, 4]);
});

test('any other error is the answer at once, without the v3 statement', async () => {
  const { sent, search } = fakePool({ live: 4, failWith: '57014' });

  await expect(search()).rejects.toMatchObject({ code: '57014' });
  expect(sent).toEqual([4]);
});
