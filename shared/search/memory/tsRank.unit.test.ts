import {
  compareLexemes,
  entryContribution,
  formatTsvectorText,
  matchingEntries,
  parseTsvectorText,
  rankOfContributions,
  tsRank,
  uniqueOperands,
  wordEntryPos,
  type TsVector,
} from './tsRank';

const A = 3;
const B = 2;
const C = 1;
const D = 0;

describe('parseTsvectorText', () => {
  test('reads lexemes, positions and weights as PostgreSQL writes them', () => {
    expect(parseTsvectorText(`'brain':1A,5B 'cortex':2A 'it''s':3C 'x':4`)).toEqual([
      { lexeme: 'brain', positions: [wordEntryPos(1, A), wordEntryPos(5, B)] },
      { lexeme: 'cortex', positions: [wordEntryPos(2, A)] },
      { lexeme: "it's", positions: [wordEntryPos(3, C)] },
      { lexeme: 'x', positions: [wordEntryPos(4, D)] },
    ]);
  });

  test('a doubled quote is a quote and a backslash escapes the next character', () => {
    const vector = parseTsvectorText(String.raw`'a\\b' '''' 'c\'d' '\\'`);
    expect(vector.map((e) => e.lexeme)).toEqual(["'", '\\', 'a\\b', "c'd"]);
    expect(formatTsvectorText(vector)).toBe(String.raw`'''' '\\' 'a\\b' 'c''d'`);
  });

  test('entries without positions, and the empty vector', () => {
    expect(parseTsvectorText(`'a' 'b'`)).toEqual([
      { lexeme: 'a', positions: [] },
      { lexeme: 'b', positions: [] },
    ]);
    expect(parseTsvectorText('')).toEqual([]);
  });

  test('entries sort by their UTF-8 bytes: astral characters after the rest of the BMP', () => {
    const vector = parseTsvectorText(`'😀':1 'ｱ':2 'é':3 'z':4 'zz':5`);
    expect(vector.map((e) => e.lexeme)).toEqual(['z', 'zz', 'é', 'ｱ', '😀']);
    expect(compareLexemes('😀', 'ｱ')).toBeGreaterThan(0);
    expect(compareLexemes('ab', 'abc')).toBeLessThan(0);
  });

  test('as tsvectorin: bare words, lowercase weights, duplicates merged, positions clamped', () => {
    expect(parseTsvectorText(`b:3,1b,3a a:2d b:1 c:20000`)).toEqual([
      { lexeme: 'a', positions: [wordEntryPos(2, D)] },
      { lexeme: 'b', positions: [wordEntryPos(1, B), wordEntryPos(3, A)] },
      { lexeme: 'c', positions: [wordEntryPos(16383, D)] },
    ]);
  });

  test('refuses position 0 and an unterminated quote', () => {
    expect(() => parseTsvectorText(`'a':0`)).toThrow(/position/);
    expect(() => parseTsvectorText(`'a`)).toThrow(/unterminated/);
  });

  test('formats back to the text it read', () => {
    const text = `'brain':1A,5B 'it''s':3C 'x':4 'y' 'ü':7,8B`;
    expect(formatTsvectorText(parseTsvectorText(text))).toBe(text);
  });
});

describe('tsRank', () => {
  const vector: TsVector = parseTsvectorText(`'brain':1A,5B 'brainstem':2A 'cortex':3C 'mouse':9`);
  const prefix = (lexeme: string) => ({ lexeme, prefix: true });
  const exact = (lexeme: string) => ({ lexeme, prefix: false });

  test('one operand: the contributions of its entries, summed in float4', () => {
    // One position of weight A: (1 + 1 - 1) / (pi^2 / 6), stored as float4.
    expect(tsRank(parseTsvectorText(`'a':1A`), [exact('a')])).toBe(Math.fround(1 / 1.64493406685));
    const entries = matchingEntries(vector, prefix('brain'));
    expect(entries).toEqual({ first: 0, count: 2 });
    const contributions = vector.slice(0, 2).map((e) => entryContribution(e.positions));
    expect(tsRank(vector, [prefix('brain')])).toBe(rankOfContributions(contributions));
  });

  test('no match is 0 for one operand, 1e-20 (as float4) for an AND', () => {
    expect(tsRank(vector, [prefix('zebra')])).toBe(0);
    expect(tsRank(vector, [prefix('brain'), prefix('zebra')])).toBe(Math.fround(1e-20));
    expect(tsRank([], [prefix('brain')])).toBe(0);
    expect(tsRank(vector, [])).toBe(0);
  });

  test('repeated operands count once; of equal lexemes the later one written is kept', () => {
    expect(tsRank(vector, [prefix('brain'), prefix('brain')])).toBe(tsRank(vector, [prefix('brain')]));
    expect(uniqueOperands([exact('brain'), prefix('brain'), exact('a')])).toEqual([
      exact('a'),
      prefix('brain'),
    ]);
  });

  test('an AND of two operands grows as they come closer', () => {
    const near = tsRank(parseTsvectorText(`'a':1A 'b':2A`), [exact('a'), exact('b')]);
    const far = tsRank(parseTsvectorText(`'a':1A 'b':20A`), [exact('a'), exact('b')]);
    expect(near).toBeGreaterThan(far);
    expect(Math.fround(near)).toBe(near);
  });
});
