/**
 * The texts the uncached search figures draw from (issue 22): 10,000 distinct texts a person might
 * type into the catalogue's search box, built from the words of the generated catalogue's names,
 * descriptions, species and categories (catalogueEvents.ts): whole words, word prefixes (search as
 * you type), typos (a letter dropped, doubled, swapped or replaced), two-word texts, species
 * names, and name fragments with a number. Deterministic: two runs draw the same texts in the same
 * order, and no text repeats, so with no answer kept each query is one nobody asked before.
 */
import { QUALIFIERS, REGIONS } from '#services/command-api/seedSynthetic/syntheticBrains';
import { CATEGORIES, SPECIES } from './catalogueEvents';
import { seededRandom } from '#tests/support/seededRandom';

export const VOCABULARY_SIZE = 10_000;

/** The words of the generated names and descriptions (the synthetic seed's, which catalogueEvents.ts uses). */
export const NAME_WORDS: readonly string[] = [
  ...new Set([...REGIONS, ...QUALIFIERS].flatMap((term) => term.split(' '))),
];

const SPECIES_TEXTS = SPECIES.flatMap(([scientific, common]) => [scientific, common]);
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz';

/** One typo of a word of four or more letters: a letter dropped, doubled, swapped or replaced. */
function typo(random: () => number, word: string): string {
  const at = 1 + Math.floor(random() * (word.length - 2));
  switch (Math.floor(random() * 4)) {
    case 0:
      return word.slice(0, at) + word.slice(at + 1);
    case 1:
      return word.slice(0, at) + word[at] + word.slice(at);
    case 2:
      return word.slice(0, at) + word[at + 1] + word[at] + word.slice(at + 2);
    default:
      return word.slice(0, at) + ALPHABET[Math.floor(random() * 26)] + word.slice(at + 1);
  }
}

const pick = <T>(random: () => number, values: readonly T[]): T =>
  values[Math.floor(random() * values.length)]!;

/** A prefix of three letters or more (a text typed so far). */
const prefix = (random: () => number, word: string): string =>
  word.slice(0, 3 + Math.floor(random() * (word.length - 2))).trimEnd();

/** The kinds of text and how often each is drawn (tenths). */
const KINDS: readonly [weight: number, make: (random: () => number, brains: number) => string][] = [
  [2, (random) => prefix(random, pick(random, NAME_WORDS))],
  [
    2,
    (random) =>
      typo(
        random,
        pick(
          random,
          NAME_WORDS.filter((w) => w.length >= 4),
        ),
      ),
  ],
  [2, (random) => `${pick(random, NAME_WORDS)} ${prefix(random, pick(random, NAME_WORDS))}`],
  [
    1,
    (random) =>
      `${typo(
        random,
        pick(
          random,
          NAME_WORDS.filter((w) => w.length >= 4),
        ),
      )} ${pick(random, NAME_WORDS)}`,
  ],
  [
    1,
    (random) => (random() < 0.5 ? pick(random, SPECIES_TEXTS) : prefix(random, pick(random, SPECIES_TEXTS))),
  ],
  [1, (random, brains) => `${pick(random, NAME_WORDS)} ${1 + Math.floor(random() * brains)}`],
  [1, (random) => (random() < 0.5 ? pick(random, NAME_WORDS) : pick(random, CATEGORIES))],
];

/** VOCABULARY_SIZE distinct texts for a catalogue of `brains` brains, in drawing order. */
export function searchVocabulary(brains: number, size = VOCABULARY_SIZE): string[] {
  const random = seededRandom(22);
  const weights = KINDS.reduce((sum, [weight]) => sum + weight, 0);
  const texts = new Set<string>();
  while (texts.size < size) {
    let draw = random() * weights;
    const kind = KINDS.find(([weight]) => (draw -= weight) < 0) ?? KINDS[0]!;
    texts.add(kind[1](random, brains));
  }
  return [...texts];
}
