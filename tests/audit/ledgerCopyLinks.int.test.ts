import { randomUUID } from 'node:crypto';
import { START, type RecordedEvent } from '#shared/eventStore/eventStore';
import { GENESIS_HASH, canonicalEventText } from '#shared/audit/ledgerChain';
import { ProjectionRunner } from '#shared/projections/projectionRunner';
import { forwardingEventStore } from '#shared/eventStore/forwardingEventStore';
import { ledgerProjection } from '#services/projector/projections/ledgerProjection';
import { checkLinksByCopy } from '#services/projector/ledgerCopyLinks';
import { eventStoreDatabase } from '#tests/support/eventStoreDatabase';
import { waitFor } from '#tests/support/waitFor';

/**
 * verify-ledger checks the links straight from the tables: the events by binary COPY, each one's
 * canonical bytes written from the payloads' bytes (never parsed into objects), against the ledger
 * the audit_log projection chained from canonicalEventText of the events store.readAll returns. On
 * real jsonb (numbers as numeric prints them, escapes, member order by length, unicode) and recorded
 * times of every microsecond pattern, every link must hold: the two ways give the same bytes.
 */
const db = eventStoreDatabase('ledger_copy_links');
let all: RecordedEvent[];

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
  // readAll returns only what no transaction still open on the server can precede: under the
  // parallel suite another database's transaction may hold the last ones back for a moment.
  const expected = 3 + PAYLOADS.length * TIMES.length;
  all = (await waitFor(
    'every event readable',
    async () => {
      const events = await db.store.readAll({ maxCount: 10_000 });
      return events.length === expected ? events : undefined;
    },
    { timeoutMs: 30_000 },
  ))!;
  // Per event, through apply (a store whose tables the runner cannot see takes no catch-up by copy):
  // the chain this check is held against is the one computed from canonicalEventText, not from bytes.
  await new ProjectionRunner({
    store: forwardingEventStore(db.store),
    pool: db.pool,
    projections: [ledgerProjection],
  }).catchUp();
});

const sources = () => ({ events: db.pool, ledger: db.pool });
const storedHash = async (seq: number): Promise<Buffer> =>
  (await db.pool.query<{ hash: Buffer }>('SELECT hash FROM ledger WHERE seq = $1', [seq])).rows[0]!.hash;

test('every link holds, the ledger read in pages of 5 and the events in one COPY', async () => {
  // The table's positions cross a digit within one transaction.
  expect(
    all.some(
      (e, i) => i > 0 && e.position.commit === all[i - 1]!.position.commit && e.position.prepare === 10n,
    ),
  ).toBe(true);
  const pages: number[] = [];
  const check = await checkLinksByCopy(
    sources(),
    {
      fromSeq: 1,
      toSeq: all.length,
      previousHash: GENESIS_HASH,
      startPosition: START,
      storeHead: await db.store.headPosition(),
      pageSize: 5,
    },
    (checked) => pages.push(checked),
  );
  const broken = check.firstBroken === undefined ? undefined : all[check.firstBroken - 1];
  expect({ ...check, text: broken && canonicalEventText(broken) }).toEqual({
    firstBroken: undefined,
    checked: all.length,
    text: undefined,
  });
  expect(pages).toEqual(Array.from({ length: Math.ceil(all.length / 5) - 1 }, (_, i) => 5 * (i + 1)));
});

test('a segment from the middle: from the stored hash and position before it, up to its last seq', async () => {
  const check = await checkLinksByCopy(sources(), {
    fromSeq: 11,
    toSeq: 30,
    previousHash: await storedHash(10),
    startPosition: all[9]!.position,
    storeHead: await db.store.headPosition(),
    pageSize: 7,
  });
  expect(check).toEqual({ firstBroken: undefined, checked: 20 });
});

test('the first broken link is named: a ledger hash edited, a ledger row beyond the events, a stop', async () => {
  const segment = async () => ({
    fromSeq: 1,
    toSeq: all.length,
    previousHash: GENESIS_HASH,
    startPosition: START,
    storeHead: await db.store.headPosition(),
    pageSize: 4,
  });
  const original = await storedHash(13);
  await db.pool.query("UPDATE ledger SET hash = '\\x00' || substr(hash, 2) WHERE seq = 13");
  try {
    expect(await checkLinksByCopy(sources(), await segment())).toEqual({ firstBroken: 13, checked: 12 });
  } finally {
    await db.pool.query('UPDATE ledger SET hash = $1 WHERE seq = 13', [original]);
  }
  // The store's head before the last event: the ledger's last row has no event to match.
  const short = { ...(await segment()), storeHead: all[all.length - 2]!.position };
  expect(await checkLinksByCopy(sources(), short)).toEqual({
    firstBroken: all.length,
    checked: all.length - 1,
  });
  // Asked after each page: stopped once the second page is checked.
  let pages = 0;
  expect(
    await checkLinksByCopy(
      sources(),
      await segment(),
      () => pages++,
      () => pages >= 2,
    ),
  ).toEqual({ firstBroken: undefined, checked: 8 });
  // The connections went back to the pool (an abandoned COPY's is closed): the pool still answers.
  expect((await db.pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
});
