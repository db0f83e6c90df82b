import pg from 'pg';
import { createTestDatabase } from '#tests/support/testPostgres';
import {
  WORD_SIMILARITY_THRESHOLD,
  createWordSimilarityDictionary,
  isWordSimilar,
  minSharedTrigrams,
  prepareIsWordSimilar,
  prepareWordSimilarity,
  textTrigrams,
  wordSimilarity,
  wordSimilarityIsExact,
} from './wordSimilarity';

let pool: pg.Pool;

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await createTestDatabase('word_sim'), max: 1 });
  await pool.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
});
afterAll(async () => {
  await pool.end();
});

/** Words of brain names, some sharing trigrams, a few outside ASCII. */
const VOCABULARY = [
  'thalamus',
  'hypothalamus',
  'hippocampus',
  'hippocampal',
  'cortex',
  'cortical',
  'cerebellum',
  'cerebral',
  'amygdala',
  'striatum',
  'putamen',
  'caudate',
  'nucleus',
  'accumbens',
  'substantia',
  'nigra',
  'pons',
  'medulla',
  'oblongata',
  'insula',
  'cingulate',
  'precuneus',
  'fusiform',
  'gyrus',
  'sulcus',
  'entorhinal',
  'olfactory',
  'bulb',
  'mouse',
  'macaque',
  'human',
  'rat',
  'marmoset',
  'zebrafish',
  'allen',
  'atlas',
  'bigbrain',
  'p56',
  'mri',
  'dti',
  't1w',
  't2',
  'v1',
  'ca1',
  'ca3',
  'dg',
  'left',
  'right',
  'brain',
  'brains',
  'brainstem',
  'slice',
  'section',
  'stack',
  'volume',
  'x',
  'xy',
  'ab',
  'a',
  '2015',
  '42',
  'é',
  'émile',
  'über',
  'straße',
  'ångström',
  'cerveau',
  'gehirn',
  '脳',
  '大脑皮层',
  'naïve',
  '🧠',
  'brain🧠stem',
  'co₂',
];
const SEPARATORS = [' ', ' ', ' ', '  ', '-', '_', ', ', '.', '/', "'", ' (', ') ', '\t', ' – ', 'é', '·'];

/** A small seeded generator (mulberry32): the same cases every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const next = random(20261127);
const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789éüß';

/** One typo of the kind Elasticsearch's fuzziness allows: a deletion, swap, insertion or substitution. */
function typo(word: string): string {
  const chars = [...word];
  const at = Math.floor(next() * chars.length);
  switch (Math.floor(next() * 4)) {
    case 0:
      chars.splice(at, 1);
      break;
    case 1:
      if (at + 1 < chars.length) [chars[at], chars[at + 1]] = [chars[at + 1]!, chars[at]!];
      break;
    case 2:
      chars.splice(at, 0, pick([...LETTERS]));
      break;
    default:
      chars[at] = pick([...LETTERS]);
  }
  return chars.join('');
}

/** A word as a searcher types it: whole, with typos, a prefix, or in another case. */
function typedWord(): string {
  const word = pick(VOCABULARY);
  const roll = next();
  if (roll < 0.35) return typo(next() < 0.3 ? typo(word) : word);
  if (roll < 0.5) return word.slice(0, 1 + Math.floor(next() * word.length));
  if (roll < 0.6) return word.toUpperCase();
  if (roll < 0.65) return word.charAt(0).toUpperCase() + word.slice(1);
  return word;
}

/** A text of up to `max` words joined by spaces and punctuation, sometimes a word repeated. */
function text(max: number): string {
  const words = Array.from({ length: Math.floor(next() * (max + 1)) }, typedWord);
  if (words.length > 0 && next() < 0.1) words.push(words[0]!);
  return words.reduce((joined, word, i) => (i === 0 ? word : joined + pick(SEPARATORS) + word), '');
}

/** A brain's name: a few words, sometimes long, sometimes with an id. */
function name(): string {
  const words = text(next() < 0.05 ? 40 : 6);
  return next() < 0.2 ? `${words} ${Math.floor(next() * 1000)}` : words;
}

interface PostgresAnswer {
  similarity: number;
  similar: boolean;
}

/** word_similarity as float8 (every bit of its float4) and `<%`, per pair, in one statement. */
async function postgresAnswers(pairs: readonly (readonly [string, string])[]): Promise<PostgresAnswer[]> {
  const { rows } = await pool.query<PostgresAnswer>(
    `SELECT word_similarity(p.q, p.t)::float8 AS similarity, p.q <% p.t AS similar
       FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS p(q, t, i)
      ORDER BY p.i`,
    [pairs.map(([query]) => query), pairs.map(([, target]) => target)],
  );
  return rows;
}

/** The pairs whose similarity or `<%` in JS is not PostgreSQL's, bit for bit. */
async function mismatches(pairs: readonly (readonly [string, string])[]): Promise<string[]> {
  const answers = await postgresAnswers(pairs);
  const wrong: string[] = [];
  pairs.forEach(([query, target], i) => {
    const pg = answers[i]!;
    const js = wordSimilarity(query, target);
    const similar = isWordSimilar(query, target);
    if (!Object.is(js, pg.similarity) || similar !== pg.similar)
      wrong.push(
        `${JSON.stringify(query)} <% ${JSON.stringify(target)}: js ${js} ${similar}, pg ${pg.similarity} ${pg.similar}`,
      );
  });
  compared += pairs.length;
  return wrong;
}

let compared = 0;
let dictionaryPairs = 0;
afterAll(() =>
  console.log(
    `wordSimilarity: ${compared} pairs compared with PostgreSQL's word_similarity and <%, ` +
      `${dictionaryPairs} word/query pairs with %> through the dictionary`,
  ),
);

test('the server classifies characters as this port assumes (17, LC_CTYPE C) and the threshold is 0.6', async () => {
  await pool.query(`SELECT word_similarity('a', 'a')`); // loads pg_trgm, which defines its settings
  const { rows } = await pool.query<{ major: number; ctype: string; threshold: string }>(
    `SELECT current_setting('server_version_num')::int / 10000 AS major, datctype AS ctype,
            current_setting('pg_trgm.word_similarity_threshold') AS threshold
       FROM pg_database WHERE datname = current_database()`,
  );
  // PostgreSQL 18 classifies by the database's locale: non-ASCII letters would join words there.
  expect(rows[0]).toEqual({ major: 17, ctype: 'C', threshold: String(WORD_SIMILARITY_THRESHOLD) });
});

test('typed words against brain names, and names against names, as in PostgreSQL', async () => {
  for (let batch = 0; batch < 8; batch++) {
    const pairs = Array.from({ length: 5000 }, (): [string, string] => {
      const roll = next();
      if (roll < 0.6) return [typedWord(), name()];
      if (roll < 0.8) return [text(3), name()];
      return [name(), text(3)];
    });
    expect((await mismatches(pairs)).slice(0, 10)).toEqual([]);
  }
});

test('a dictionary word against its typos, one and two letters, empty texts and punctuation', async () => {
  // '\ud83e' alone reaches PostgreSQL as U+FFFD: a separator there as here.
  const edges = [
    '',
    ' ',
    'a',
    'A',
    'ab',
    'aB',
    'x y',
    '--',
    '_a_',
    'a-b',
    '12',
    '1 2 3',
    'é',
    'ß',
    '脳',
    '🧠',
    'a🧠b',
    'a\ud83eb',
  ];
  const words = [...VOCABULARY, ...edges];
  const pairs: [string, string][] = [];
  for (const word of words) {
    for (const other of words) pairs.push([word, other]);
    for (let i = 0; i < 20; i++) pairs.push([typo(word), word], [word, typo(word)]);
  }
  expect((await mismatches(pairs)).slice(0, 10)).toEqual([]);
});

test('similarities right at the threshold (3/5 and its float4 neighbours)', async () => {
  // A query of n letters has n + 1 trigrams: "abcd" has 5, and a target holding 3 of them in a row
  // sits at 3/5 or next to it.
  const pairs: [string, string][] = [];
  for (const query of ['abcd', 'abcdefghi', 'abcdefghijklmn', 'abcdefghijklmnopqrs'])
    for (let from = 0; from < query.length; from++)
      for (let to = from + 1; to <= query.length; to++) {
        const part = query.slice(from, to);
        pairs.push([query, part], [query, `${part}x`], [query, `x${part}`], [query, `${part} ${part}`]);
      }
  expect((await mismatches(pairs)).slice(0, 10)).toEqual([]);
});

test('a prepared query gives the same answers as the one-off functions, target after target', () => {
  const query = 'hipocampus cortx';
  const similarity = prepareWordSimilarity(query);
  const similar = prepareIsWordSimilar(query);
  for (let i = 0; i < 2000; i++) {
    const target = name();
    expect(similarity(target)).toBe(wordSimilarity(query, target));
    expect(similar(target)).toBe(isWordSimilar(query, target));
  }
});

test('the dictionary finds exactly the words PostgreSQL finds with `word %> query`', async () => {
  const words = [
    ...new Set(Array.from({ length: 3000 }, () => (next() < 0.5 ? typedWord() : pick(VOCABULARY)))),
  ];
  const dictionary = createWordSimilarityDictionary(words);
  const queries = Array.from({ length: 300 }, typedWord);
  const { rows } = await pool.query<{ words: string[] }>(
    `SELECT ARRAY(SELECT w.word FROM unnest($1::text[]) WITH ORDINALITY AS w(word, i)
                   WHERE w.word %> q.query ORDER BY w.i) AS words
       FROM unnest($2::text[]) WITH ORDINALITY AS q(query, i)
      ORDER BY q.i`,
    [words, queries],
  );
  const wrong = queries.filter((query, i) => {
    const found = dictionary.similarWords(query);
    return JSON.stringify(found) !== JSON.stringify(rows[i]!.words);
  });
  expect(wrong.slice(0, 10)).toEqual([]);
  expect(rows.some((row) => row.words.length > 1)).toBe(true);
  dictionaryPairs += words.length * queries.length;
});

test('the prefilter bound: no similar pair shares fewer distinct trigrams than it asks for', () => {
  for (let i = 0; i < 20000; i++) {
    const query = typedWord();
    const target = name();
    if (!isWordSimilar(query, target)) continue;
    const queryTrigrams = new Set(textTrigrams(query));
    const targetTrigrams = new Set(textTrigrams(target));
    const shared = [...queryTrigrams].filter((trigram) => targetTrigrams.has(trigram)).length;
    expect(shared).toBeGreaterThanOrEqual(minSharedTrigrams(queryTrigrams.size));
  }
});

test('every text PostgreSQL takes is handled exactly; a NUL it refuses is not', async () => {
  expect(wordSimilarityIsExact('Ångström 🧠 脳 brain')).toBe(true);
  expect(wordSimilarityIsExact('a\0b')).toBe(false);
  await expect(pool.query(`SELECT word_similarity($1, 'a')`, ['a\0b'])).rejects.toThrow();
});
