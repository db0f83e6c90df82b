import { ByteSink, CanonicalJsonWriter } from './canonicalJsonBytes';
import { canonicalJson } from './ledgerCanonicalJson';
import { seededRandom } from '#tests/support/seededRandom';

/**
 * One writer and one sink for every text, as verify-ledger uses them (member records and the sink
 * reused from text to text; the sink starts small so that it grows), each text written after a prefix
 * already in the sink (as an event's bytes follow the chain's hash).
 */
const writer = new CanonicalJsonWriter();
const sink = new ByteSink(8);
const PREFIX = Buffer.from('prefix:');

function canonicalFromJsonText(text: string, replace?: readonly [name: string, value: string]): string {
  const source = Buffer.from(text, 'utf8');
  sink.length = 0;
  sink.bytes(PREFIX, 0, PREFIX.length);
  writer.write(
    sink,
    source,
    0,
    source.length,
    replace && { name: Buffer.from(replace[0]), value: Buffer.from(replace[1]) },
  );
  const out = sink.view();
  expect(out.subarray(0, PREFIX.length).equals(PREFIX)).toBe(true);
  return out.toString('utf8', PREFIX.length);
}

/** What it must equal: the canonical form of what JSON.parse makes of the text. */
const expected = (text: string): string | undefined => canonicalJson(JSON.parse(text));

const STRINGS = [
  '__proto__',
  '',
  'a',
  'é',
  '€',
  '😀',
  '\u0000',
  '\n\t"\\',
  '\u2028',
  '\u001f',
  'Z',
  'aa',
  '10',
  '9',
  'B',
  'b',
  '/',
  '\u007f',
  'a description long enough to be copied by the native copy rather than byte by byte, é and 😀 in it',
];
/** Number texts, as PostgreSQL's numeric prints them and as other writers may. */
const NUMBERS = [
  '0',
  '-0',
  '1',
  '-1',
  '1.5',
  '1.0',
  '10.50',
  '1e21',
  '1E-7',
  '1e+2',
  '123456789012345678901234',
  '0.000001',
  '5e-324',
  '0.30000000000000004',
  '9007199254740993',
  '-1e308',
  '333333333.3333333',
  '999999999999999',
  '1000000000000000',
];

/** A random JSON text, with random whitespace as jsonb and others write it. */
function randomText(random: () => number, depth: number): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const space = (): string => pick(['', '', ' ', '\n  ']);
  const string = (): string => {
    const s = JSON.stringify(pick(STRINGS) + pick(STRINGS));
    // Some strings with escapes JSON.stringify would not write.
    return random() < 0.2 ? s.replace(/é/g, '\\u00e9').replace(/\//g, '\\/').replace(/a/g, '\\u0061') : s;
  };
  const kind = depth <= 0 ? Math.floor(random() * 4) : Math.floor(random() * 6);
  switch (kind) {
    case 0:
      return 'null';
    case 1:
      return random() < 0.5 ? 'true' : 'false';
    case 2:
      return pick(NUMBERS);
    case 3:
      return string();
    case 4:
      return `[${space()}${Array.from({ length: Math.floor(random() * 4) }, () => randomText(random, depth - 1)).join(`,${space()}`)}${space()}]`;
    default:
      return `{${space()}${Array.from(
        { length: Math.floor(random() * 6) },
        () => `${string()}${space()}:${space()}${randomText(random, depth - 1)}`,
      ).join(`,${space()}`)}${space()}}`;
  }
}

test('equals canonicalJson(JSON.parse(text)) for 5,000 random JSON texts', () => {
  const random = seededRandom(2026);
  for (let i = 0; i < 5000; i++) {
    const text = randomText(random, 4);
    expect([i, text, canonicalFromJsonText(text)]).toEqual([i, text, expected(text)]);
  }
});

test('jsonb text (", " and ": ", members by length): sorted by UTF-16 code units', () => {
  const text = '{"9": 1, "b": [1.0, -0, 1e2], "10": {"z": null, "a": "\\u00e9"}, "B": true, "😀": 3, "€": 4}';
  expect(canonicalFromJsonText(text)).toBe(
    '{"10":{"a":"é","z":null},"9":1,"B":true,"b":[1,0,100],"€":4,"😀":3}',
  );
  expect(canonicalFromJsonText(text)).toBe(expected(text));
});

test('a repeated name keeps its last value, as JSON.parse does', () => {
  const text = '{"a": 1, "b": 2, "a": 3}';
  expect(canonicalFromJsonText(text)).toBe('{"a":3,"b":2}');
  expect(canonicalFromJsonText(text)).toBe(expected(text));
});

test('replace: the outermost member of that name gives way to the value given, or is added', () => {
  const recordedAt = ['recordedAt', '"2026-01-02T03:04:05.678Z"'] as const;
  expect(
    canonicalFromJsonText('{"actor": "1", "recordedAt": "old", "a": {"recordedAt": 1}}', recordedAt),
  ).toBe('{"a":{"recordedAt":1},"actor":"1","recordedAt":"2026-01-02T03:04:05.678Z"}');
  expect(canonicalFromJsonText('{}', recordedAt)).toBe('{"recordedAt":"2026-01-02T03:04:05.678Z"}');
  expect(canonicalFromJsonText('{"z": 1}', recordedAt)).toBe(
    canonicalJson({ ...(JSON.parse('{"z": 1}') as object), recordedAt: '2026-01-02T03:04:05.678Z' }),
  );
});

test('malformed text throws', () => {
  for (const text of [
    '{"a": 1',
    '[1, 2',
    '{"a" 1}',
    '{a: 1}',
    '"open',
    '1 2',
    'nul',
    '{"a": 1,}x',
    '"\u0001"',
  ])
    expect(() => canonicalFromJsonText(text)).toThrow();
});

test('a text in the middle of a larger buffer: only its bytes are read', () => {
  const text = '{"b": [1.0, "x"], "a": {"d": 1, "c": 2}}';
  const source = Buffer.from(`]]"{${text}}"[[`, 'utf8');
  sink.length = 0;
  writer.write(sink, source, 4, 4 + Buffer.byteLength(text));
  expect(sink.view().toString('utf8')).toBe('{"a":{"c":2,"d":1},"b":[1,"x"]}');
  expect(() => writer.write(sink, source, 4, 4 + Buffer.byteLength(text) - 1)).toThrow();
});

test('objects nested deeper than any before, after a shallow one: member records per depth', () => {
  let deep = '1';
  for (let i = 0; i < 40; i++) deep = `{"z${i}": ${deep}, "a${i}": ${i}}`;
  expect(canonicalFromJsonText('{"b": 1, "a": 2}')).toBe('{"a":2,"b":1}');
  expect(canonicalFromJsonText(deep)).toBe(expected(deep));
});

test('an order remembered from objects of as many members is used only where it sorts these', () => {
  // Shapes of three members in turn, each sorted by a different order; then names that a remembered
  // order would put in the wrong place, a repeated name, and non-ASCII names.
  const texts = [
    '{"c": 1, "b": 2, "a": 3}',
    '{"b": 1, "a": 2, "c": 3}',
    '{"zz": 1, "y": 2, "x": 3}',
    '{"c": 1, "b": 2, "a": 3}',
    '{"a": 1, "c": 2, "b": 3}',
    '{"x": 1, "z": 2, "y": 3}',
    '{"b": 1, "b": 2, "a": 3}',
    '{"é": 1, "e": 2, "f": 3}',
    '{"abd": 1, "abc": 2, "abcd": 3}',
    '{"abcd": 1, "abc": 2, "abd": 3}',
  ];
  for (let round = 0; round < 3; round++)
    for (const text of texts) expect([text, canonicalFromJsonText(text)]).toEqual([text, expected(text)]);
});
