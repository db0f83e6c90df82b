import { mirrored } from './brainSql';

test('mirrored reads an ordering backwards, term by term', () => {
  expect(mirrored('b.date_uploaded DESC, b.id DESC')).toBe('b.date_uploaded ASC, b.id ASC');
  expect(mirrored('lower(b.name) ASC, b.readable_id DESC, b.id DESC')).toBe(
    'lower(b.name) DESC, b.readable_id ASC, b.id ASC',
  );
  expect(mirrored(mirrored('b.id ASC'))).toBe('b.id ASC');
});

test('a term without a direction cannot be mirrored', () => {
  expect(() => mirrored('b.id')).toThrow('cannot mirror the ordering term b.id');
});
