import type { GlobalPosition } from '#shared/eventStore/eventStore';
import { ProjectionProgress } from '#shared/projections/projectionProgress';
import { ChangeAwareCache } from '#shared/query/changeAwareCache';
import type { SearchQuery, SearchReader, SearchResult } from '#shared/search/searchIndex';
import { KEPT_RANKING, keptRankingPage } from './searchBrains';

const now: GlobalPosition = { commit: 10n, prepare: 10n };
const TOTAL = 25_000;

/** A search whose ranking is the ids TOTAL, TOTAL - 1, …, recording the windows it was asked for. */
function setUp() {
  const asked: { limit: number; offset: number }[] = [];
  const search: SearchReader = {
    query: (query: SearchQuery): Promise<SearchResult> => {
      asked.push({ limit: query.limit, offset: query.offset });
      const end = Math.min(TOTAL, query.offset + query.limit);
      const ids = Array.from({ length: Math.max(0, end - query.offset) }, (_, i) => TOTAL - query.offset - i);
      return Promise.resolve({ total: TOTAL, ids });
    },
  };
  const progress = new ProjectionProgress();
  progress.advance(now, []);
  const searchRankings = new ChangeAwareCache<SearchResult>(progress, {
    dependsOn: () => true,
    maxEntries: 10,
  });
  return { deps: { search, searchRankings }, asked };
}

const page = (offset: number, limit = 20): SearchQuery => ({ text: 'cortex', limit, offset });
const expected = (offset: number, limit = 20) => Array.from({ length: limit }, (_, i) => TOTAL - offset - i);

test('the first pages are slices of one ranking of KEPT_RANKING.first ids', async () => {
  const { deps, asked } = setUp();
  for (const offset of [0, 20, 40, KEPT_RANKING.first - 20])
    expect((await keptRankingPage(deps, page(offset), now)).ids).toEqual(expected(offset));
  expect(asked).toEqual([{ limit: KEPT_RANKING.first, offset: 0 }]);
});

test('a page beyond the first ranking keeps a deep one, whose pages are slices of it too', async () => {
  const { deps, asked } = setUp();
  await keptRankingPage(deps, page(0), now);
  for (const offset of [KEPT_RANKING.first, 5_000, KEPT_RANKING.deep - 20]) {
    const result = await keptRankingPage(deps, page(offset), now);
    expect(result.ids).toEqual(expected(offset));
    expect(result.total).toBe(TOTAL);
  }
  expect(asked).toEqual([
    { limit: KEPT_RANKING.first, offset: 0 },
    { limit: KEPT_RANKING.deep, offset: 0 },
  ]);
});

test('a page beyond the deep ranking is asked for alone; a page across its end too', async () => {
  const { deps, asked } = setUp();
  expect((await keptRankingPage(deps, page(KEPT_RANKING.deep), now)).ids).toEqual(
    expected(KEPT_RANKING.deep),
  );
  expect((await keptRankingPage(deps, page(KEPT_RANKING.deep - 10), now)).ids).toEqual(
    expected(KEPT_RANKING.deep - 10),
  );
  expect(asked).toEqual([
    { limit: KEPT_RANKING.deep, offset: 0 },
    { limit: 20, offset: KEPT_RANKING.deep },
    { limit: 20, offset: KEPT_RANKING.deep - 10 },
  ]);
});

test('without text the search is asked for the page itself', async () => {
  const { deps, asked } = setUp();
  await keptRankingPage(deps, { limit: 20, offset: 40 }, now);
  expect(asked).toEqual([{ limit: 20, offset: 40 }]);
});
