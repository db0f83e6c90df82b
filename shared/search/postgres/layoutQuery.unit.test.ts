import type { Pool } from 'pg';
import { parseSearchText } from '#shared/search/searchText';
import { createLayoutQuery } from './layoutQuery';
import { listSql, searchSql } from './searchQuerySql';

interface FakeDatabase {
  /** The layout of the generation the views point at. */
  live: 4 | 5;
  /** Refuses the v5 statement whatever the layout (as a statement naming a wrong column would). */
  v5Broken?: boolean;
  /** Runs after the v5 statement is refused, before the next statement (a swap in between). */
  afterRefusal?: () => void;
  /** Fails every statement with this code instead. */
  failWith?: string;
}

/** A pool answering as PostgreSQL would for the live layout; `sent` lists the statements' layouts. */
function fakePool(db: FakeDatabase, statement: 'search' | 'list' = 'search') {
  const sent: (4 | 5)[] = [];
  const pool = {
    query: ({ text }: { text: string }) => {
      const layout = text.includes('v5_live') ? 4 : 5;
      sent.push(layout);
      const fail = (code: string) => Promise.reject(Object.assign(new Error(`failed: ${code}`), { code }));
      if (db.failWith) return fail(db.failWith);
      if (layout === 5 && (db.live === 4 || db.v5Broken)) {
        db.afterRefusal?.();
        return fail(db.v5Broken ? '42703' : '42P01');
      }
      return Promise.resolve({
        rows: [{ answeredBy: layout, ...(layout === 4 ? { v5_live: db.live === 5 } : {}) }],
      });
    },
  } as unknown as Pool;
  const layoutQuery = createLayoutQuery(pool);
  const sources = {
    documents: 'public."docs"',
    words: 'public."docs_words"',
    lexemes: 'public."docs_lexemes"',
  };
  const query = { text: 'cortex', limit: 10, offset: 0, filters: { viewer: { userId: 7, isStaff: false } } };
  const search = async () => {
    const rows = await layoutQuery<{ answeredBy: number }>((layout) =>
      statement === 'search'
        ? searchSql(query, parseSearchText('cortex')!, sources, layout)
        : listSql(query, sources.documents, 'public."docs_counts"', layout),
    );
    return rows[0]?.answeredBy;
  };
  return { sent, search };
}

describe.each(['search', 'list'] as const)('the %s statement', (statement) => {
  test('with the v5 layout live, each query is the one v5 statement', async () => {
    const { sent, search } = fakePool({ live: 5 }, statement);

    expect([await search(), await search(), await search()]).toEqual([5, 5, 5]);
    expect(sent).toEqual([5, 5, 5]);
  });

  test('with v4 live, one refused v5 statement, then v4 statements only; the first query after the swap returns to v5', async () => {
    const db: FakeDatabase = { live: 4 };
    const { sent, search } = fakePool(db, statement);

    expect([await search(), await search(), await search()]).toEqual([4, 4, 4]);
    expect(sent).toEqual([5, 4, 4, 4]);

    db.live = 5;
    sent.length = 0;
    expect([await search(), await search()]).toEqual([4, 5]);
    expect(sent).toEqual([4, 5]);
  });

  test('a swap between the refused v5 statement and the v4 one: the v5 statement again answers', async () => {
    const db: FakeDatabase = { live: 4 };
    db.afterRefusal = () => (db.live = 5);
    const { sent, search } = fakePool(db, statement);

    expect(await search()).toBe(5);
    expect(sent).toEqual([5, 4, 5]);
  });

  test('a v5 statement refused while the views are v5 is a fault of the statement: its error is the answer', async () => {
    const { sent, search } = fakePool({ live: 5, v5Broken: true }, statement);

    await expect(search()).rejects.toMatchObject({ code: '42703' });
    expect(sent).toEqual([5, 4, 5]);
  });

  test('any other error is the answer at once, without the v4 statement', async () => {
    const { sent, search } = fakePool({ live: 5, failWith: '57014' }, statement);

    await expect(search()).rejects.toMatchObject({ code: '57014' });
    expect(sent).toEqual([5]);
  });
});
