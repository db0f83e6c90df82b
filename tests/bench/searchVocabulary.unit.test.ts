import { searchVocabulary, VOCABULARY_SIZE } from './searchVocabulary';

describe('searchVocabulary', () => {
  it('draws 10,000 distinct texts, the same ones on every run', () => {
    const texts = searchVocabulary(1_000_000);
    expect(texts).toHaveLength(VOCABULARY_SIZE);
    expect(new Set(texts).size).toBe(VOCABULARY_SIZE);
    expect(texts.every((text) => text.trim() === text && text.length >= 2)).toBe(true);
    expect(searchVocabulary(1_000_000)).toEqual(texts);
  });

  it('mixes the kinds of text a person types: prefixes, typos, two words, species, numbers', () => {
    const texts = searchVocabulary(1_000_000);
    const share = (test: (text: string) => boolean): number => texts.filter(test).length / texts.length;
    expect(share((text) => text.includes(' '))).toBeGreaterThan(0.3);
    expect(share((text) => /\d/.test(text))).toBeGreaterThan(0.05);
    expect(texts).toContain('house mouse');
    // Prefixes (search as you type) and typos: words of the names that are not whole words.
    expect(texts).toContain('hip');
    expect(share((text) => /^[a-z]+$/.test(text))).toBeGreaterThan(0.1);
  });
});
