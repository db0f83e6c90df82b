import pg from 'pg';
import { createTestDatabase } from '#tests/support/testPostgres';
import {
  entryContribution,
  formatTsvectorText,
  matchingEntries,
  parseTsvectorText,
  rankOfContributions,
  tsRank,
  uniqueOperands,
  type TsQueryOperand,
} from './tsRank';

let pool: pg.Pool;

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await createTestDatabase('ts_rank'), max: 1 });
});
afterAll(async () => {
  await pool.end();
});

/** Words that repeat and start one another, a few outside ASCII, one that splits ("it's"). */
const VOCABULARY = [
  ...'brain brains brainstem bra cortex cortical cor mouse mus musculus atlas allen p56'.split(' '),
  ...'thalamus thal ångström émile über x xy 42'.split(' '),
  "it's",
];
/** Prefixes of the words above, and words no text has. */
const QUERY_ONLY = ['b', 'br', 'brai', 'co', 'cort', 'mu', 'th', 'å', 'é', 'zebra', 'q', 'brainz'];

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
const words = (max: number): string =>
  Array.from({ length: Math.floor(next() * (max + 1)) }, () => pick(VOCABULARY)).join(' ');

/** The texts a search document's vector is made of (DOCUMENT_COLUMNS' search_vector). */
interface DocumentTexts {
  readonly name: string;
  readonly readableId: string;
  readonly placement: string;
  readonly description: string;
}

const randomDocument = (): DocumentTexts => ({
  name: words(4),
  readableId: next() < 0.5 ? `${pick(VOCABULARY)}-${Math.floor(next() * 100)}` : '',
  placement: words(4),
  description: words(next() < 0.1 ? 40 : 8),
});

/**
 * A query of 1-4 words: whole words, prefixes, absent words, repeats; mostly prefix operands (the
 * search writes only those), some not, so that a lexeme may come both ways.
 */
function randomQuery(): string {
  const count = 1 + Math.floor(next() * 4);
  const operands = Array.from({ length: count }, () => {
    const word = next() < 0.7 ? pick(VOCABULARY) : pick(QUERY_ONLY);
    return `'${word.replace(/'/g, "''")}'${next() < 0.8 ? ':*' : ''}`;
  });
  if (count > 1 && next() < 0.2) operands.push(operands[0]!);
  return operands.join(' & ');
}

/** A tsquery's operands from its text (`'a':* & 'b' <-> 'c'`): lexeme and prefix flag, in order. */
function queryOperands(text: string): TsQueryOperand[] {
  const operands: TsQueryOperand[] = [];
  for (const match of text.matchAll(/'((?:[^'\\]|''|\\.)*)'(:[*ABCD]*)?/g)) {
    const lexeme = match[1]!.replace(/''/g, "'").replace(/\\(.)/g, '$1');
    operands.push({ lexeme, prefix: (match[2] ?? '').includes('*') });
  }
  return operands;
}

interface RankedRow {
  vector: string;
  query: string;
  rank: number;
}

/** PostgreSQL's vector text, query text and ts_rank (as float8: every bit of the float4) per case. */
async function rankDocuments(
  documents: readonly DocumentTexts[],
  queries: readonly string[],
): Promise<RankedRow[]> {
  const { rows } = await pool.query<RankedRow>(
    `SELECT v::text AS vector, q::text AS query, ts_rank(v, q)::float8 AS rank
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
            WITH ORDINALITY AS c(name, readable_id, placement, description, query, i)
      CROSS JOIN LATERAL (SELECT
              setweight(to_tsvector('simple', c.name || ' ' || c.readable_id), 'A') ||
              setweight(to_tsvector('simple', c.placement), 'B') ||
              setweight(to_tsvector('simple', c.description), 'C') AS v,
              to_tsquery('simple', c.query) AS q) x
      ORDER BY c.i`,
    [
      documents.map((d) => d.name),
      documents.map((d) => d.readableId),
      documents.map((d) => d.placement),
      documents.map((d) => d.description),
      queries,
    ],
  );
  return rows;
}

/** The same for vectors and queries given as tsvector and tsquery texts. */
async function rankVectors(cases: readonly (readonly [string, string])[]): Promise<RankedRow[]> {
  const { rows } = await pool.query<RankedRow>(
    `SELECT v::text AS vector, q::text AS query, ts_rank(v, q)::float8 AS rank
       FROM unnest($1::tsvector[], $2::tsquery[]) WITH ORDINALITY AS c(v, q, i)
      ORDER BY c.i`,
    [cases.map(([vector]) => vector), cases.map(([, query]) => query)],
  );
  return rows;
}

/** The cases whose rank in JS is not PostgreSQL's, bit for bit (also through contributions). */
function mismatches(rows: readonly RankedRow[]): string[] {
  const wrong: string[] = [];
  for (const row of rows) {
    const vector = parseTsvectorText(row.vector);
    const operands = queryOperands(row.query);
    const rank = tsRank(vector, operands);
    if (!Object.is(rank, row.rank)) wrong.push(`${row.vector} | ${row.query}: js ${rank}, pg ${row.rank}`);
    const unique = uniqueOperands(operands);
    if (unique.length !== 1 || vector.length === 0) continue;
    const { first, count } = matchingEntries(vector, unique[0]!);
    const summed = rankOfContributions(
      vector.slice(first, first + count).map((e) => entryContribution(e.positions)),
    );
    if (!Object.is(summed, row.rank))
      wrong.push(`${row.vector} | ${row.query}: contributions ${summed}, pg ${row.rank}`);
  }
  return wrong;
}

let compared = 0;
afterAll(() => console.log(`tsRank: ${compared} cases compared with PostgreSQL's ts_rank`));

test('random search documents and queries rank as in PostgreSQL', async () => {
  for (let batch = 0; batch < 6; batch++) {
    const documents = Array.from({ length: 1000 }, randomDocument);
    const cases = documents.flatMap((d) => [d, d, d]);
    const rows = await rankDocuments(cases, cases.map(randomQuery));
    expect(mismatches(rows).slice(0, 10)).toEqual([]);
    compared += rows.length;
  }
});

test('every distance (1 to 120 apart) and pair of weights of an AND', async () => {
  const cases: [string, string][] = [];
  for (let distance = 1; distance <= 120; distance++)
    for (const a of ['A', 'B', 'C', 'D'])
      for (const b of ['A', 'B', 'C', 'D']) cases.push([`'a':3${a} 'b':${3 + distance}${b}`, `'a' & 'b':*`]);
  const rows = await rankVectors(cases);
  expect(mismatches(rows)).toEqual([]);
  compared += rows.length;
});

test('vectors without positions, many positions, and the last position', async () => {
  const vectors = [
    `'a' 'b'`,
    `'a' 'b':3A 'ab':1,2B 'abc'`,
    `'a':16383A 'b' 'c':16383`,
    formatTsvectorText(parseTsvectorText(Array.from({ length: 300 }, (_, i) => `'a':${i + 1}B`).join(' '))),
    Array.from(
      { length: 256 },
      (_, i) => `'a':${2 * i + 1}${'ABCD'[i % 4]} 'b':${2 * i + 2}${'DCBA'[i % 3]}`,
    ).join(' '),
  ];
  const queries = [
    `'a'`,
    `'a':*`,
    `'a' & 'b'`,
    `'b' & 'a':*`,
    `'a' & 'c'`,
    `'ab' & 'a':*`,
    `'a' & 'a':*`,
    `'a':* & 'a'`,
  ];
  const cases = vectors.flatMap((vector) => queries.map((query) => [vector, query] as const));
  const rows = await rankVectors(cases);
  expect(mismatches(rows)).toEqual([]);
  compared += rows.length;
});

test('a repeated word and more than 256 occurrences, as to_tsvector makes them', async () => {
  const long = {
    name: 'brain brain',
    readableId: 'brain-1',
    placement: 'brain',
    description: 'brain cortex '.repeat(300),
  };
  // Past the last position: || shifts the description's positions beyond MAX_ENTRY_POS - 1.
  const huge = { ...long, name: `${'x '.repeat(16390)}brain`, description: 'brain cortex '.repeat(9000) };
  const queries = [
    `'brain':*`,
    `'brain':* & 'cortex':*`,
    `'cortex':* & 'brain':* & 'brain':*`,
    `'bra':* & 'br':*`,
  ];
  const rows = await rankDocuments(
    queries.flatMap(() => [long, huge]),
    queries.flatMap((query) => [query, query]),
  );
  expect(rows[0]!.vector.split(',').length).toBeGreaterThan(256);
  expect(mismatches(rows)).toEqual([]);
  compared += rows.length;
});

test('an empty query ranks 0', async () => {
  const { rows } = await pool.query<{ rank: number }>(
    `SELECT ts_rank(to_tsvector('simple', 'brain'), to_tsquery('simple', ''))::float8 AS rank`,
  );
  expect(rows[0]!.rank).toBe(tsRank(parseTsvectorText(`'brain':1`), []));
  compared += 1;
});

test('parses what tsvectorin accepts as PostgreSQL does', async () => {
  const texts = [
    `b:3,1b,3a a:2d b:1 c:20000`,
    String.raw`'a\\b' '''' 'c\'d' '\\' 'é':1 '😀':2 'ｱ':3 'z':4`,
    `'x':5,5A,5,4B,4`,
  ];
  const { rows } = await pool.query<{ text: string }>(
    'SELECT v::text AS text FROM unnest($1::tsvector[]) WITH ORDINALITY AS c(v, i) ORDER BY c.i',
    [texts],
  );
  expect(texts.map((text) => formatTsvectorText(parseTsvectorText(text)))).toEqual(
    rows.map((row) => row.text),
  );
});
