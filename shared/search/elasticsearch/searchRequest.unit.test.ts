import { parseSearchText } from '#shared/search/searchText';
import type { SearchFilters } from '#shared/search/searchIndex';
import { searchRequest } from './searchRequest';

const page = { limit: 20, offset: 40 };

test('an explicit sort maps to sortable fields and ends on the highest id', () => {
  const request = searchRequest(
    'brains',
    {
      ...page,
      text: 'cortex',
      sort: [
        { field: 'name', descending: false },
        { field: 'date_uploaded', descending: true },
      ],
    },
    parseSearchText('cortex'),
  );
  expect(request.sort).toEqual([{ 'name.exact': 'asc' }, { dateUploaded: 'desc' }, { brainId: 'desc' }]);
  expect(request).toMatchObject({ from: 40, size: 20 });
});

test('without a sort: relevance with text, recency without', () => {
  expect(searchRequest('brains', { ...page, text: 'x' }, parseSearchText('x')).sort).toEqual([
    { _score: { order: 'desc' } },
    { dateUploaded: 'desc' },
    { brainId: 'desc' },
  ]);
  expect(searchRequest('brains', page, undefined).sort).toEqual([
    { dateUploaded: 'desc' },
    { brainId: 'desc' },
  ]);
});

test('any substring of the name matches, however short, with wildcard characters escaped', () => {
  const clauses = JSON.stringify(searchRequest('brains', page, parseSearchText('a*')).query);
  expect(clauses).toContain(JSON.stringify({ value: '*a\\**', case_insensitive: true }));
});

describe('the visibility rule', () => {
  const ended = {
    bool: { filter: [{ term: { visibility: 'embargoed' } }, { range: { embargoUntil: { lte: 'now' } } }] },
  };
  const storedPublic = [
    { term: { visibility: 'public' } },
    { bool: { must_not: [{ exists: { field: 'visibility' } }] } },
  ];
  const filterOf = (filters: SearchFilters, text?: string) => {
    const request = searchRequest(
      'brains',
      { ...page, text, filters, facets: ['species'] },
      text ? parseSearchText(text) : undefined,
    );
    return (request.query?.bool?.filter ?? []) as unknown[];
  };

  test('a signed-in viewer: public as stored (or written before visibility), an ended embargo, or among the readers', () => {
    for (const text of [undefined, 'cortex'])
      expect(filterOf({ viewer: { userId: 7, isStaff: false }, speciesIds: [1] }, text)).toEqual([
        { terms: { speciesId: [1] } },
        { bool: { should: [...storedPublic, ended, { term: { readers: 7 } }], minimum_should_match: 1 } },
      ]);
  });

  test('an anonymous viewer: public in effect only; staff and internal callers: no rule', () => {
    expect(filterOf({ viewer: { userId: null, isStaff: false } })).toEqual([
      { bool: { should: [...storedPublic, ended], minimum_should_match: 1 } },
    ]);
    expect(filterOf({ viewer: { userId: 3, isStaff: true } })).toEqual([]);
    expect(filterOf({})).toEqual([]);
  });

  test('the rule is a filter of the query itself: the total and the aggregations count under it', () => {
    const request = searchRequest(
      'brains',
      { ...page, filters: { viewer: { userId: null, isStaff: false } }, facets: ['species', 'atlas'] },
      undefined,
    );
    expect(request.track_total_hits).toBe(true);
    expect(request.aggs).toEqual({
      species: { terms: { field: 'speciesId', size: 200 } },
      atlas: { terms: { field: 'atlasId', size: 200 } },
    });
    expect(request.post_filter).toBeUndefined();
    expect(request.query?.bool?.filter).toHaveLength(1);
  });

  test('the visibility filter is the effective one, after the rule: an ended embargo is public, not embargoed', () => {
    const viewer = { userId: 7, isStaff: false };
    const [, publicOnly] = filterOf({ viewer, visibility: 'public' });
    expect(publicOnly).toEqual({ bool: { should: [...storedPublic, ended], minimum_should_match: 1 } });
    expect(filterOf({ viewer: { userId: 1, isStaff: true }, visibility: 'private' })).toEqual([
      { term: { visibility: 'private' } },
    ]);
    expect(filterOf({ visibility: 'embargoed' })).toEqual([
      {
        bool: {
          filter: [{ term: { visibility: 'embargoed' } }],
          must_not: [{ range: { embargoUntil: { lte: 'now' } } }],
        },
      },
    ]);
  });
});
