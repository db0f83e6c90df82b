import { parseSearchText } from '#shared/search/searchText';
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
