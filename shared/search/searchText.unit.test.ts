import { orderFacetCounts } from './facetOrder';
import { latestWrites } from './latestWrites';
import { escapeLike, parseSearchText, searchWords } from './searchText';

describe('parseSearchText', () => {
  test('blank text is no text', () => {
    expect(parseSearchText(undefined)).toBeUndefined();
    expect(parseSearchText('  \t ')).toBeUndefined();
  });

  test('digits within the integer range are also an id', () => {
    expect(parseSearchText(' 42 ')).toEqual({ text: '42', numericId: 42 });
    expect(parseSearchText('2147483648')).toEqual({ text: '2147483648', numericId: undefined });
    expect(parseSearchText('42a')).toEqual({ text: '42a', numericId: undefined });
  });
});

test('searchWords lowercases and splits on anything but letters and digits', () => {
  expect(searchWords('Mus musculus, P56-atlas')).toEqual(['mus', 'musculus', 'p56', 'atlas']);
  expect(searchWords('Ångström')).toEqual(['ångström']);
  expect(searchWords('!!!')).toEqual([]);
});

test('escapeLike makes wildcards literal', () => {
  expect(escapeLike('50%_a\\b')).toBe('50\\%\\_a\\\\b');
});

test('latestWrites keeps the write with the latest position per brain', () => {
  const at = (commit: bigint, prepare: bigint) => ({ commit, prepare });
  const kept = latestWrites(
    [
      { id: 1, position: at(2n, 1n), tag: 'b' },
      { id: 1, position: at(1n, 9n), tag: 'a' },
      { id: 2, position: at(1n, 1n), tag: 'c' },
      { id: 1, position: at(2n, 0n), tag: 'stale' },
    ],
    (w) => w.id,
  );
  expect(kept.map((w) => w.tag)).toEqual(['b', 'c']);
});

test('facet counts: largest first, then smallest value, false before true', () => {
  expect(
    orderFacetCounts([
      { value: true, count: 2 },
      { value: false, count: 2 },
      { value: 9, count: 5 },
    ]),
  ).toEqual([
    { value: 9, count: 5 },
    { value: false, count: 2 },
    { value: true, count: 2 },
  ]);
});
