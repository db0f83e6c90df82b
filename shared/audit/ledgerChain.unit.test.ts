import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { ChainedEvent } from './ledgerChain';
import { GENESIS_HASH, canonicalEventBytes, canonicalEventText, chainHash } from './ledgerChain';
import { canonicalJson } from './ledgerCanonicalJson';
import { seededRandom } from '#tests/support/seededRandom';

const event: ChainedEvent = {
  id: '3f2a9c1e-8b7d-4e6f-9a1b-2c3d4e5f6a7b',
  type: 'BrainUpdated',
  streamName: 'brain-42',
  streamRevision: 3n,
  data: { brainId: 42, changes: { name: 'Mouse 7', speciesId: 3 }, updatedAt: '2026-01-02T03:04:05.678Z' },
  metadata: {
    actor: '7',
    requestId: 'req-1',
    correlationId: 'c0ffee00-0000-4000-8000-000000000001',
    causationId: null,
    schemaVersion: 1,
    recordedAt: '2026-01-02T03:04:05.678Z',
  },
};

/** The same object with its members in reverse order, at every depth. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .reverse()
      .map(([k, v]) => [k, reversed(v)]),
  );
}

describe('canonical event bytes', () => {
  test('are RFC 8785 text: members sorted at every depth, no whitespace, the revision as a string', () => {
    expect(canonicalEventBytes(event).toString('utf8')).toBe(
      '{"data":{"brainId":42,"changes":{"name":"Mouse 7","speciesId":3},"updatedAt":"2026-01-02T03:04:05.678Z"},' +
        '"id":"3f2a9c1e-8b7d-4e6f-9a1b-2c3d4e5f6a7b",' +
        '"metadata":{"actor":"7","causationId":null,"correlationId":"c0ffee00-0000-4000-8000-000000000001","recordedAt":"2026-01-02T03:04:05.678Z","requestId":"req-1","schemaVersion":1},' +
        '"revision":"3","stream":"brain-42","type":"BrainUpdated"}',
    );
  });

  test('are the canonical JSON of the event as one object, whatever its strings and payload hold', () => {
    const generalForm = (e: ChainedEvent): string | undefined =>
      canonicalize({
        id: e.id,
        type: e.type,
        stream: e.streamName,
        revision: e.streamRevision.toString(),
        data: e.data,
        metadata: e.metadata,
      });
    const variants: ChainedEvent[] = [
      event,
      { ...event, data: undefined },
      { ...event, data: null, streamRevision: 0n },
      { ...event, data: [1, 'two', { b: 2, a: [null, true] }], streamRevision: 12_345_678_901_234n },
      { ...event, id: 'quote " backslash \\ newline \n', type: 'é\u2028😀', streamName: 'stream\t"x"' },
      { ...event, data: { '10': 1, '9': 2, __proto__x: 3, ü: 4, z: { y: 'z', x: 1.5e300 } } },
      { ...event, metadata: { ...event.metadata, causationId: 'c\u0000\u001f', schemaVersion: -0 } },
    ];
    for (const variant of variants) {
      expect(canonicalEventText(variant)).toBe(generalForm(variant));
      expect(canonicalEventBytes(variant).toString('utf8')).toBe(generalForm(variant));
    }
  });

  test('do not depend on the order of members in the payload or the metadata', () => {
    const shuffled = {
      ...event,
      data: reversed(event.data),
      metadata: reversed(event.metadata) as ChainedEvent['metadata'],
    };
    expect(canonicalEventBytes(shuffled).equals(canonicalEventBytes(event))).toBe(true);
    expect(chainHash(GENESIS_HASH, shuffled).equals(chainHash(GENESIS_HASH, event))).toBe(true);
  });
});

describe('the chain', () => {
  const base = chainHash(GENESIS_HASH, event);

  test('is SHA-256 of the previous hash followed by the canonical bytes, from 32 zero bytes', () => {
    expect(GENESIS_HASH.equals(Buffer.alloc(32))).toBe(true);
    expect(base).toHaveLength(32);
    const expected = createHash('sha256')
      .update(Buffer.alloc(32))
      .update(canonicalEventBytes(event))
      .digest();
    expect(base.equals(expected)).toBe(true);
  });

  test.each<[string, Partial<ChainedEvent>]>([
    ['id', { id: '3f2a9c1e-8b7d-4e6f-9a1b-2c3d4e5f6a7c' }],
    ['type', { type: 'BrainCreated' }],
    ['stream', { streamName: 'brain-43' }],
    ['revision', { streamRevision: 4n }],
    ['a payload value', { data: { ...(event.data as object), brainId: 43 } }],
    [
      'a nested payload value',
      { data: { ...(event.data as object), changes: { name: 'Mouse 8', speciesId: 3 } } },
    ],
    ['a payload member added', { data: { ...(event.data as object), extra: null } }],
    ['a value type (number to string)', { data: { ...(event.data as object), brainId: '42' } }],
    ['the actor', { metadata: { ...event.metadata, actor: 'system' } }],
    ['the request id', { metadata: { ...event.metadata, requestId: null } }],
    ['the recorded time', { metadata: { ...event.metadata, recordedAt: '2026-01-02T03:04:05.679Z' } }],
  ])('changes when %s changes', (_field, change) => {
    expect(chainHash(GENESIS_HASH, { ...event, ...change }).equals(base)).toBe(false);
  });

  test('depends on the previous hash, so on every event before', () => {
    const other = Buffer.alloc(32, 1);
    expect(chainHash(other, event).equals(base)).toBe(false);
  });

  test('depends on the order of events', () => {
    const second = { ...event, id: '00000000-0000-4000-8000-000000000002', streamRevision: 4n };
    const ab = chainHash(chainHash(GENESIS_HASH, event), second);
    const ba = chainHash(chainHash(GENESIS_HASH, second), event);
    expect(ab.equals(ba)).toBe(false);
  });
});

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
  '\ud800',
  'Z',
  'aa',
  '10',
  '9',
  'B',
  'b',
  '\u00e9',
];
const NUMBERS = [
  0,
  -0,
  1,
  -1,
  1.5,
  1e21,
  1e-7,
  123456789012345680000,
  5e-324,
  0.1 + 0.2,
  2 ** 53,
  -1e308,
  333333333.3333333,
];

function randomJson(random: () => number, depth: number): unknown {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const kind = depth <= 0 ? Math.floor(random() * 4) : Math.floor(random() * 6);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return random() < 0.5;
    case 2:
      return pick(NUMBERS);
    case 3:
      return pick(STRINGS) + pick(STRINGS);
    case 4:
      return Array.from({ length: Math.floor(random() * 4) }, () => randomJson(random, depth - 1));
    default:
      return Object.fromEntries(
        Array.from({ length: Math.floor(random() * 6) }, () => [
          pick(STRINGS) + pick(STRINGS),
          randomJson(random, depth - 1),
        ]),
      );
  }
}

describe('canonicalJson', () => {
  test('writes what the canonicalize package writes, for 5,000 random JSON values', () => {
    const random = seededRandom(18);
    for (let i = 0; i < 5000; i++) {
      const value = randomJson(random, 4);
      expect([i, canonicalJson(value)]).toEqual([i, canonicalize(value)]);
    }
  });

  test('sorts members by UTF-16 code units, index-like names included ("10" before "9")', () => {
    expect(canonicalJson({ 9: 'a', 10: 'b', b: 1, B: 2, '😀': 3, '€': 4 })).toBe(
      '{"10":"b","9":"a","B":2,"b":1,"€":4,"😀":3}',
    );
  });

  test('keeps a member named __proto__ (as JSON.parse makes it) and orders it like any other', () => {
    const parsed = JSON.parse('{"b": 1, "__proto__": {"z": 1, "a": 2}, "A": 3}') as unknown;
    expect(canonicalJson(parsed)).toBe('{"A":3,"__proto__":{"a":2,"z":1},"b":1}');
    expect(canonicalJson(parsed)).toBe(canonicalize(parsed));
  });

  test('leaves out undefined members, writes undefined array slots as null, honours toJSON, refuses NaN', () => {
    expect(canonicalJson({ a: undefined, b: [undefined, new Date(0)] })).toBe(
      '{"b":[null,"1970-01-01T00:00:00.000Z"]}',
    );
    expect(() => canonicalJson({ a: Number.NaN })).toThrow('NaN');
    expect(() => canonicalJson([Number.POSITIVE_INFINITY])).toThrow('Infinity');
  });
});
