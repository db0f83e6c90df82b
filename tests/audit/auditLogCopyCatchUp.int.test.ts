import { randomUUID } from 'node:crypto';
import type { EventStore, NewEvent } from '#shared/eventStore/eventStore';
import { ProjectionRunner } from '#shared/projections/projectionRunner';
import { READ_MODEL_SCHEMA, type Projection } from '#shared/projections/projection';
import { installProjection } from '#shared/projections/projectionInstaller';
import { auditLogProjection } from '#services/projector/projections/auditLogProjection';
import { beginAuditCopyCatchUp } from '#services/projector/projections/auditLogCopyCatchUp';
import { ledgerProjection } from '#services/projector/projections/ledgerProjection';
import { verifyLedger } from '#services/projector/verifyLedger';
import { eventStoreDatabase } from '#tests/support/eventStoreDatabase';
import { waitFor } from '#tests/support/waitFor';

/**
 * On the PostgreSQL store the audit log and the ledger catch up from the events' bytes (binary COPY,
 * canonical bytes, rows in binary COPY) instead of applying RecordedEvent objects: on a store of
 * every kind of event the audit log treats apart (secrets removed, resources named in the payload,
 * references, internal events, revisions running across batches) and of payloads and metadata jsonb
 * keeps in forms JSON writes otherwise, the rows and links must be the per-event path's byte for
 * byte, from empty, after a stop half-way, and past the resources it remembers; and the live path
 * goes on from them.
 */
const db = eventStoreDatabase('audit_log_copy_catch_up');

/** The store without its tables: the runner can only apply RecordedEvent objects (the per-event path). */
const perEventStore = (): EventStore => {
  const store = db.store;
  return {
    appendToStream: (...args) => store.appendToStream(...args),
    readStream: (...args) => store.readStream(...args),
    readAll: (...args) => store.readAll(...args),
    subscribeToAll: (...args) => store.subscribeToAll(...args),
    headPosition: () => store.headPosition(),
    newestPosition: () => store.newestPosition!(),
    close: () => Promise.resolve(),
  };
};

const catchUp = (store: EventStore, batchSize: number, auditLog: Projection = auditLogProjection) =>
  new ProjectionRunner({
    store,
    pool: db.pool,
    projections: [auditLog, ledgerProjection],
    batchSize,
    copyBatchSize: batchSize,
  }).catchUp();

const AUDIT_TABLES = ['audit_events_v2', 'audit_references_v2'];

/** Drops the audit log's and the ledger's tables and checkpoints: the next catch-up starts from empty tables. */
async function reset(): Promise<void> {
  await db.pool.query('DROP VIEW IF EXISTS public.audit_events, public.audit_references, public.ledger');
  await db.pool.query(
    `DROP TABLE IF EXISTS ${[...AUDIT_TABLES, 'ledger_v1'].map((t) => `${READ_MODEL_SCHEMA}.${t}`).join(', ')}`,
  );
  await db.pool
    .query(
      `DELETE FROM ${READ_MODEL_SCHEMA}.projection_checkpoints WHERE projection IN ('audit_log', 'ledger')`,
    )
    .catch(() => undefined); // none yet
}

interface Ledger {
  readonly rows: string[];
  readonly references: string[];
  readonly indexes: string[];
  readonly links: string[];
}

/** Every row as text, its payload as jsonb's stored bytes, the indexes of both tables, and the ledger's links. */
async function ledger(): Promise<Ledger> {
  const rows = await db.pool.query<{ row: string }>(
    `SELECT e::text || ' ' || encode(jsonb_send(e.data), 'hex') AS row FROM audit_events e ORDER BY seq`,
  );
  const references = await db.pool.query<{ row: string }>(
    'SELECT r::text AS row FROM audit_references r ORDER BY seq, ref',
  );
  const indexes = await db.pool.query<{ index: string }>(
    `SELECT indexdef AS index FROM pg_indexes WHERE schemaname = $1
        AND tablename = ANY($2) ORDER BY indexname`,
    [READ_MODEL_SCHEMA, AUDIT_TABLES],
  );
  const links = await db.pool.query<{ row: string }>('SELECT l::text AS row FROM ledger l ORDER BY seq');
  return {
    rows: rows.rows.map((r) => r.row),
    references: references.rows.map((r) => r.row),
    indexes: indexes.rows.map((r) => r.index),
    links: links.rows.map((r) => r.row),
  };
}

const meta = (actor: string): NewEvent['metadata'] => ({
  actor,
  requestId: randomUUID(),
  correlationId: randomUUID(),
  causationId: null,
  schemaVersion: 1,
});
const event = (type: string, data: unknown, actor = '1'): NewEvent => ({
  id: randomUUID(),
  type,
  data,
  metadata: meta(actor),
});

/** Events through the store: every kind the audit log reads apart, brain-1's revisions spread out. */
async function appendCatalogue(round: number): Promise<void> {
  const token = randomUUID();
  const upload = randomUUID();
  const append = (stream: string, events: NewEvent[]) => db.store.appendToStream(stream, events);
  await append(`user-${round}`, [
    event(
      'UserRegistered',
      {
        userId: round,
        username: `ann\t${round}`,
        email: 'ann@example.org',
        passwordHash: 'scrypt$secret',
        isStaff: false,
      },
      'system',
    ),
    event('AccessTokenIssued', { tokenId: token, name: 'ci é', tokenHash: 'h', token: 't', secret: 's' }),
    event('AccessTokenRevoked', { tokenId: token }),
  ]);
  await append(`accessTokenUsage-${token}`, [event('AccessTokenUsed', { tokenId: token, usedAt: 'now' })]);
  await append(`reservation-email-${round}`, [
    event('ValueReserved', { scope: 'email', value: 'ann@example.org', ownerId: `user-${round}` }),
    event('ReservationReleased', { ownerId: `user-${round}` }),
  ]);
  await append(`reservation-username-${round}`, [
    event('ValueReserved', { scope: 'username', value: 'ann', ownerId: `user-${round}` }),
  ]);
  await append(`ids-${round}`, [
    event('IdAllocated', { sequence: 'brain', id: 100 + round }),
    event('IdAllocated', { sequence: 'unknown', id: 7 }),
    event('StreamFenced', { stream: `brain-${round}` }),
  ]);
  await append(`category-${round}`, [event('CategoryCreated', { categoryId: round, name: 'mri 😀' })]);
  await append(`species-${round}`, [event('SpeciesCreated', { speciesId: round, categoryId: round })]);
  await append(`atlas-${round}`, [event('AtlasCreated', { atlasId: round, speciesId: round, ratio: 0.1 })]);
  await append(`brain-${100 + round}`, [
    event(
      'BrainCreated',
      {
        brainId: 100 + round,
        name: 'line\nbreak "quoted" back\\slash \u2028 中文',
        speciesId: round,
        atlasId: round,
        categoryId: String(round),
        uploaderId: 2,
      },
      '2',
    ),
    event('BrainCollaboratorAdded', { brainId: 100 + round, userId: 3, role: 'viewer' }),
  ]);
  await append(`upload-${upload}`, [
    event('UploadReceived', { uploadId: upload, associatedBrainId: 100 + round, filename: 'b.nii.gz' }),
  ]);
  // brain-1 changes in every round: its revisions run across many batches.
  await append('brain-1', [
    event(round === 1 ? 'BrainCreated' : 'BrainUpdated', {
      brainId: 1,
      changes: { atlasId: round, speciesId: '', name: `round ${round}` },
      atlasId: round,
    }),
  ]);
}

/** jsonb PostgreSQL keeps in forms JSON.parse and JSON.stringify write otherwise, straight into the table. */
const ODD_PAYLOADS = [
  '{"n": 1.0, "m": 10.50, "e": 1e2, "z": -0, "big": 123456789012345678901234, "tiny": 0.0000001}',
  '{"s": "tab\\tquote\\" slash\\/ e\\u00e9", "é": 1, "😀": {"10": 2, "9": 3, "": []}}',
  '{"__proto__": {"b": 1}, "nested": [[], {}, [null, true, false, "x"]], "speciesId": 4}',
  '{"atlasId": "\\u0041b", "speciesId": 3.0, "categoryId": "", "associatedBrainId": 1e21}',
  '{"categoryId": "a\\"b\\tc", "changes": {"atlasId": "\\\\"}}',
  '{"changes": {"speciesId": 12345678901234567890, "atlasId": null}, "secret": 1, "token": [1]}',
  '{"passwordHash": "x", "n": 1.50, "changes": [1, 2]}',
  '[1, "two", {"speciesId": 3}]',
  '"just a string"',
  'null',
  '{}',
];
const ODD_METADATA = [
  '{"actor": 7, "requestId": 12, "schemaVersion": 1.0}',
  '{"actor": "12345678901", "requestId": true}',
  '{"actor": "\\u0037", "requestId": {"a": 1}, "recordedAt": "a stored one"}',
  '{"actor": [5], "requestId": ["a", "b"]}',
  '{"actor": "system", "requestId": "r\\tq\\\\ é"}',
  '{"requestId": null}',
  '"text"',
  '[1]',
];
const ODD_TYPES = ['BrainUpdated', 'IdAllocated', 'ValueReserved', 'AccessTokenIssued', 'Odd'];
const TIMES = [
  '2026-11-27 07:39:56.123456+00',
  '2026-11-27 07:39:56.999999+00',
  '1999-12-31 23:59:59.999+00',
];

async function insertOddEvents(): Promise<void> {
  let n = 0;
  for (const data of ODD_PAYLOADS)
    for (const type of ODD_TYPES) {
      n++;
      await db.pool.query(
        `INSERT INTO event_store.events (stream_name, stream_revision, event_id, event_type, data, metadata, recorded_at)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7::timestamptz)`,
        [
          `brain-${n % 3 === 0 ? 'odd "stream" \\' : 2}`,
          n,
          randomUUID(),
          type,
          data,
          ODD_METADATA[n % ODD_METADATA.length],
          TIMES[n % TIMES.length],
        ],
      );
    }
}

let expected: Ledger;
let count: number;

beforeAll(async () => {
  for (let round = 1; round <= 6; round++) {
    await appendCatalogue(round);
    if (round === 3) await insertOddEvents();
  }
  const head = await db.store.newestPosition!();
  await db.readable(head);
  count = Number(
    (await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM event_store.events')).rows[0]!.n,
  );
  await reset();
  expect(await catchUp(perEventStore(), 5)).toBe(count);
  expected = await ledger();
}, 60_000);

test("from empty tables, the rows are the per-event path's byte for byte, and the chain verifies", async () => {
  await reset();
  expect(await catchUp(db.store, 7)).toBe(count);
  expect(await ledger()).toEqual(expected);
  expect(expected.references.length).toBeGreaterThan(20);
  // One link per event, numbered as the audit log numbers them.
  expect(expected.links).toHaveLength(count);
  expect(expected.links.map((l) => l.slice(1, l.indexOf(',')))).toEqual(
    expected.rows.map((r) => r.slice(1, r.indexOf(','))),
  );
  expect(await verifyLedger({ store: db.store, pool: db.pool, pageSize: 10 })).toMatchObject({
    ok: true,
    eventsChecked: count,
  });
});

test('stopped half-way and resumed: the same rows', async () => {
  await reset();
  await installProjection(db.pool, auditLogProjection, { deferReaderIndexes: true });
  await installProjection(db.pool, ledgerProjection);
  // Row and link 40 fail as the server stores them: five batches of 7 stay committed, with their checkpoints.
  await db.pool.query(`
    CREATE OR REPLACE FUNCTION refuse_audit_row() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'audit row % refused', NEW.seq; END $$`);
  for (const table of ['audit_events_v2', 'ledger_v1'])
    await db.pool.query(
      `CREATE TRIGGER fail_row BEFORE INSERT ON ${READ_MODEL_SCHEMA}.${table} FOR EACH ROW
         WHEN (NEW.seq = 40) EXECUTE FUNCTION refuse_audit_row()`,
    );
  await expect(catchUp(db.store, 7)).rejects.toThrow('audit row 40 refused');
  // The lane that fails first stops the other between two batches: each holds whole batches.
  const stopped = await ledger();
  const logged = stopped.rows.length;
  for (const done of [logged, stopped.links.length]) {
    expect(done % 7).toBe(0);
    expect(done).toBeLessThanOrEqual(35);
  }
  expect(Math.max(logged, stopped.links.length)).toBe(35);
  expect(stopped.rows).toEqual(expected.rows.slice(0, logged));
  expect(stopped.references).toEqual(
    expected.references.filter((r) => Number(/,(\d+)\)$/.exec(r)![1]) <= logged),
  );
  expect(stopped.links).toEqual(expected.links.slice(0, stopped.links.length));
  for (const table of ['audit_events_v2', 'ledger_v1'])
    await db.pool.query(`DROP TRIGGER fail_row ON ${READ_MODEL_SCHEMA}.${table}`);
  expect(await catchUp(db.store, 7)).toBe(count - Math.min(logged, stopped.links.length));
  expect(await ledger()).toEqual(expected);
});

test('past the resources it remembers, it looks their revisions up as apply does: the same rows', async () => {
  await reset();
  const forgetful: Projection = {
    ...auditLogProjection,
    beginCopyCatchUp: (ctx) => beginAuditCopyCatchUp(ctx, { maxRemembered: 3 }),
  };
  expect(await catchUp(db.store, 7, forgetful)).toBe(count);
  expect(await ledger()).toEqual(expected);
});

test('the live path goes on from a copy catch-up: new events chained as from empty', async () => {
  await reset();
  await catchUp(db.store, 50);
  await appendCatalogue(7);
  await appendCatalogue(8);
  const head = await db.store.newestPosition!();
  await db.readable(head);
  const runner = new ProjectionRunner({
    store: db.store,
    pool: db.pool,
    projections: [auditLogProjection, ledgerProjection],
  });
  runner.start();
  const counts = async (): Promise<number[]> => {
    const { rows } = await db.pool.query<{ logged: string; chained: string }>(
      'SELECT (SELECT count(*) FROM audit_events) AS logged, (SELECT count(*) FROM ledger) AS chained',
    );
    return [Number(rows[0]!.logged), Number(rows[0]!.chained)];
  };
  try {
    await waitFor('the live path to log and chain the new events', async () =>
      Math.min(...(await counts())) > count + 25 ? true : undefined,
    );
    const all = Number(
      (await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM event_store.events')).rows[0]!.n,
    );
    await waitFor('every event logged and chained', async () =>
      (await counts()).every((n) => n === all) ? true : undefined,
    );
  } finally {
    await runner.stop();
  }
  const live = await ledger();
  await reset();
  await catchUp(perEventStore(), 5);
  expect(live).toEqual(await ledger());
  expect(await verifyLedger({ store: db.store, pool: db.pool })).toMatchObject({ ok: true });
});
