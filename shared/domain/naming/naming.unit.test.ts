import {
  atlasSlugCandidates,
  formatScientificName,
  isNumericKey,
  normaliseHexColour,
  normaliseName,
  readableIdFor,
  scientificNameKey,
  slugify,
} from './naming';

test('names are stored lowercase with single spaces', () => {
  expect(normaliseName('  Rodent   BRAINS ')).toBe('rodent brains');
});

test('scientific names: first word capitalised, the others lowercase', () => {
  expect(formatScientificName('mus MUSCULUS')).toBe('Mus musculus');
  expect(formatScientificName('  macaca   Mulatta  ')).toBe('Macaca mulatta');
  expect(formatScientificName('DANIO')).toBe('Danio');
});

test.each(['mus%20musculus', 'Mus musculus', 'mus+musculus', 'mus_musculus', 'MUS-musculus'])(
  'a path segment %s finds the species by its key',
  (segment) => expect(scientificNameKey(decodeURIComponent(segment))).toBe('mus musculus'),
);

test('slugs are lowercase, URL-safe and bounded', () => {
  expect(slugify('Allen Mouse Brain CCFv3 (2017)')).toBe('allen-mouse-brain-ccfv3-2017');
  expect(slugify('Île-de-France atlas')).toBe('ile-de-france-atlas');
  expect(slugify('x'.repeat(100))).toHaveLength(64);
  expect(slugify('a '.repeat(40))).not.toMatch(/-$/);
  expect(slugify('???')).toBe('');
});

test('atlas slug candidates: name, then name and version, then numbered', () => {
  expect(atlasSlugCandidates('Waxholm Space', 'v4', 0)).toBe('waxholm-space');
  expect(atlasSlugCandidates('Waxholm Space', 'v4', 1)).toBe('waxholm-space-v4');
  expect(atlasSlugCandidates('Waxholm Space', 'v4', 2)).toBe('waxholm-space-v4-3');
  expect(atlasSlugCandidates('Waxholm Space', '', 1)).toBe('waxholm-space-2');
  expect(atlasSlugCandidates('???', '', 0)).toBe('atlas');
  expect(atlasSlugCandidates('y'.repeat(100), '', 7)).toHaveLength(64);
});

test('readable ids are unique by construction and never purely numeric', () => {
  expect(readableIdFor('P56 reference brain', 42)).toBe('p56-reference-brain-42');
  expect(readableIdFor('2024', 7)).toBe('brain-2024-7');
  expect(readableIdFor('???', 7)).toBe('brain-7');
  expect(readableIdFor('z'.repeat(80), 123456)).toHaveLength(64);
  const ids = new Set([readableIdFor('a-1', 2), readableIdFor('a', 12), readableIdFor('a 1', 2)]);
  expect(ids.size).toBe(2); // "a-1" and "a 1" are the same slug, and the same id: the same brain
  for (const id of ids) expect(isNumericKey(id)).toBe(false);
  expect(isNumericKey('42')).toBe(true);
});

test('colours are #rrggbb lowercase; #rgb is expanded', () => {
  expect(normaliseHexColour('#A1B2C3')).toBe('#a1b2c3');
  expect(normaliseHexColour('#AbC')).toBe('#aabbcc');
  expect(normaliseHexColour('red')).toBeUndefined();
  expect(normaliseHexColour('#12345')).toBeUndefined();
});
