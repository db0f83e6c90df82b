import { randomUUID } from 'node:crypto';
import { START, type GlobalPosition } from '#shared/eventStore/eventStore';
import { canonicalEventText } from '#shared/audit/ledgerChain';
import pg from 'pg';
import {
  EVENT_TEXTS_CONNECTION_OPTIONS,
  isoTime,
  readEventTexts,
} from '#services/projector/ledgerEventTexts';
import { eventStoreDatabase } from '#tests/support/eventStoreDatabase';
import { waitFor } from '#tests/support/waitFor';

/**
 * verify-ledger's workers read the events straight from the events table and canonicalise the
 * payloads from the text PostgreSQL prints: on real jsonb (numbers as numeric prints them, escapes,
 * member order by length, unicode) and recorded times of every microsecond pattern, each event's text
 * must be exactly canonicalEventText of the event store.readAll returns, page after page.
 */
const db = eventStoreDatabase('ledger_event_texts');
let pool: pg.Pool | undefined;
/** A connection as the workers open theirs: times printed in UTC, ISO style. */
const textsPool = (): pg.Pool =>
  (pool ??= new pg.Pool({ connectionString: db.url, max: 1, options: EVENT_TEXTS_CONNECTION_OPTIONS }));
afterAll(() => pool?.end());

/** jsonb literals PostgreSQL keeps in forms JSON.parse and JSON.stringify write otherwise. */
const PAYLOADS = [
  '{"n": 1.0, "m": 10.50, "e": 1e2, "z": -0, "big": 123456789012345678901234, "tiny": 0.0000001}',
  '{"s": "tab\\tquote\\" slash\\/ e\\u00e9 \\u001f nul-free", "é": 1, "😀": {"10": 2, "9": 3, "": []}}',
  '{"__proto__": {"b": 1, "a": 2}, "nested": [[], {}, [null, true, false, "x"]], "long key name": 1, "k": 2}',
  '[1, "two", {"three": 3}]',
  '"just a string"',
  '{}',
];
const TIMES = [
  '2026-11-27 07:39:56.123456+00',
  '2026-11-27 07:39:56.000001+00',
  '2026-11-27 07:39:56.999999+00',
  '2026-11-27 07:39:56+00',
  '2026-11-27 07:39:56.1+00',
  '2026-11-27 07:39:56.29+00',
  '2026-11-27 07:39:56.57+00',
  '1999-12-31 23:59:59.999+00',
  '2026-03-29 02:30:00.5+02',
];

beforeAll(async () => {
  // Through the store (its own metadata and recorded time) ...
  for (let n = 1; n <= 3; n++)
    await db.store.appendToStream(`brain-${n}`, [
      {
        id: randomUUID(),
        type: 'BrainCreated',
        data: { brainId: n, name: `Brain "${n}" é 😀`, tags: ['a', 'b'], ratio: n / 3 },
        metadata: {
          actor: String(n),
          requestId: randomUUID(),
          correlationId: randomUUID(),
          causationId: null,
          schemaVersion: 1,
        },
      },
    ]);
  // ... and straight into the table, with jsonb as written above and chosen recorded times, all in
  // one transaction: its global positions cross from one digit to two (ordered as numbers, not text).
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    let n = 0;
    for (const data of PAYLOADS)
      for (const time of TIMES)
        await client.query(
          `INSERT INTO event_store.events (stream_name, stream_revision, event_id, event_type, data, metadata, recorded_at)
           VALUES ($1, 0, $2, 'Odd', $3::jsonb, $4::jsonb, $5::timestamptz)`,
          [
            `odd \\ "stream" ${++n}`,
            randomUUID(),
            data,
            n % 2 === 0
              ? '{"actor": "1", "recordedAt": "a stored one", "schemaVersion": 1.0}'
              : '{"requestId": "r", "z": [1.50]}',
            time,
          ],
        );
    await client.query('COMMIT');
  } finally {
    client.release();
  }
  const head = await db.store.headPosition();
  await db.readable(head);
});

test("every event's text is canonicalEventText of the event readAll returns, page by page", async () => {
  // readAll returns only what no transaction still open on the server can precede: under the
  // parallel suite another database's transaction may hold the last ones back for a moment.
  const expected = 3 + PAYLOADS.length * TIMES.length;
  const all = (await waitFor(
    'every event readable',
    async () => {
      const events = await db.store.readAll({ maxCount: 10_000 });
      return events.length === expected ? events : undefined;
    },
    { timeoutMs: 30_000 },
  ))!;
  expect(all).toHaveLength(expected);
  // The table's positions cross a digit within one transaction.
  expect(
    all.some(
      (e, i) => i > 0 && e.position.commit === all[i - 1]!.position.commit && e.position.prepare === 10n,
    ),
  ).toBe(true);
  const head = await db.store.headPosition();
  const texts = [];
  let after: GlobalPosition = START;
  for (;;) {
    const page = await readEventTexts(textsPool(), undefined, after, head, 5);
    texts.push(...page.items.map(({ bytes, ...rest }) => ({ ...rest, text: bytes.toString('utf8') })));
    const last = page.items[page.items.length - 1];
    if (page.done || !last) break;
    after = { commit: BigInt(last.commit), prepare: BigInt(last.prepare) };
  }
  expect(texts).toEqual(
    all.map((event) => ({
      id: event.id,
      commit: event.position.commit.toString(),
      prepare: event.position.prepare.toString(),
      text: canonicalEventText(event),
    })),
  );
  // Up to a position: nothing after it.
  const middle = all[10]!;
  const upTo = await readEventTexts(textsPool(), undefined, START, middle.position, 1000);
  expect(upTo).toMatchObject({ done: true });
  expect(upTo.items.map((t) => t.id)).toEqual(all.slice(0, 11).map((e) => e.id));
});

test('isoTime writes a UTC time as toISOString writes the Date pg parses from it; another form throws', async () => {
  expect(isoTime('2026-11-27 07:39:56.123456+00')).toBe('2026-11-27T07:39:56.123Z');
  expect(isoTime('2026-11-27 07:39:56.999999+00')).toBe('2026-11-27T07:39:56.999Z');
  expect(isoTime('2026-11-27 07:39:56+00')).toBe('2026-11-27T07:39:56.000Z');
  expect(isoTime('2026-11-27 07:39:56.29+00')).toBe('2026-11-27T07:39:56.290Z');
  for (const other of [
    '2026-11-27 08:39:56.1+01',
    'infinity',
    '2026-11-27T07:39:56.1Z',
    'Fri Nov 27 07:39:56 2026 UTC',
  ])
    expect(() => isoTime(other)).toThrow('not UTC, ISO style');
  // A connection printing times otherwise: the read fails, it never chains a wrong time.
  const other = new pg.Pool({ connectionString: db.url, max: 1, options: '-c TimeZone=Europe/Paris' });
  try {
    await expect(readEventTexts(other, undefined, START, await db.store.headPosition(), 10)).rejects.toThrow(
      'not UTC, ISO style',
    );
  } finally {
    await other.end();
  }
});
