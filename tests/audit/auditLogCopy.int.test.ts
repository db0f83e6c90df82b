import { randomUUID } from 'node:crypto';
import type { AppendResult, NewEvent } from '#shared/eventStore/eventStore';
import { ProjectionRunner } from '#shared/projections/projectionRunner';
import { READ_MODEL_SCHEMA, physicalTable } from '#shared/projections/projection';
import { redactedData, referencesOfEvent } from '#shared/audit/auditedEvent';
import { auditLogProjection } from '#services/projector/projections/auditLogProjection';
import { ledgerProjection } from '#services/projector/projections/ledgerProjection';
import { verifyLedger } from '#services/projector/verifyLedger';
import { eventStoreDatabase } from '#tests/support/eventStoreDatabase';

/**
 * The audit log's rows go in with COPY, streamed as they are computed: every value survives
 * COPY's text format (tabs, line breaks, backslashes, quotes, non-ASCII), and a COPY that fails
 * half-way through a batch leaves neither rows nor checkpoint, so the batch is applied exactly once
 * when the runner tries again.
 */
const db = eventStoreDatabase('audit_log_copy');
const events = physicalTable(auditLogProjection, 'audit_events');

const metadata = (actor: string): NewEvent['metadata'] => ({
  actor,
  requestId: randomUUID(),
  correlationId: randomUUID(),
  causationId: null,
  schemaVersion: 1,
});

const brainCreated = (brainId: number, name: string): NewEvent => ({
  id: randomUUID(),
  type: 'BrainCreated',
  data: { brainId, name, speciesId: 1 + (brainId % 3), atlasId: brainId % 2 ? null : 7, categoryId: 2 },
  metadata: metadata(String(1 + (brainId % 5))),
});

const catchUp = (batchSize: number) =>
  new ProjectionRunner({
    store: db.store,
    pool: db.pool,
    projections: [auditLogProjection, ledgerProjection],
    batchSize,
  }).catchUp();

async function checkpoint(): Promise<string> {
  const { rows } = await db.pool.query<{ at: string }>(
    `SELECT commit_position || '.' || prepare_position AS at FROM ${READ_MODEL_SCHEMA}.projection_checkpoints
      WHERE projection = 'audit_log'`,
  );
  return rows[0]!.at;
}

test('values COPY would misread arrive intact, with their references and a chain that verifies', async () => {
  const awkward = [
    'tab\there',
    'line\nbreak and\r\nCRLF',
    'back\\slash \\N \\x00 \\t',
    '"quoted" \'single\'',
    'é ü 😀 \u2028 中文',
    '\\',
  ];
  await db.store.appendToStream('user-1', [
    {
      id: randomUUID(),
      type: 'UserRegistered',
      data: { userId: 1, username: 'a\tb', email: 'x@example.org', passwordHash: 'scrypt$secret' },
      metadata: { ...metadata('system'), requestId: 'req\twith\ttabs\\and\nlines' },
    },
  ]);
  await db.store.appendToStream(
    'brain-1',
    awkward.map((name, i) => ({ ...brainCreated(1, name), type: i === 0 ? 'BrainCreated' : 'BrainUpdated' })),
  );
  expect(await catchUp(4)).toBe(awkward.length + 1);

  const stored = await db.store.readAll({ maxCount: 100 });
  const { rows } = await db.pool.query<{
    seq: string;
    event_id: string;
    data: unknown;
    request_id: string | null;
    revision: string | null;
    actor_id: number | null;
  }>('SELECT seq, event_id, data, request_id, revision, actor_id FROM audit_events ORDER BY seq');
  expect(rows.map((r) => r.event_id)).toEqual(stored.map((e) => e.id));
  rows.forEach((row, i) => {
    const event = stored[i]!;
    expect(row.data).toEqual(redactedData(event.type, event.data));
    expect(row.request_id).toBe(event.metadata.requestId);
  });
  expect(rows.map((r) => r.revision)).toEqual(['0', '0', '1', '2', '3', '4', '5']);
  expect(rows[0]!.actor_id).toBeNull();
  const refs = await db.pool.query<{ ref: string; seq: string }>(
    'SELECT ref, seq FROM audit_references ORDER BY seq, ref',
  );
  expect(refs.rows).toEqual(
    stored.flatMap((e, i) => referencesOfEvent(e).map((ref) => ({ ref, seq: String(i + 1) }))),
  );
  expect(await verifyLedger({ store: db.store, pool: db.pool, pageSize: 3 })).toMatchObject({
    ok: true,
    eventsChecked: awkward.length + 1,
  });
});

test('a COPY failing half-way through a batch leaves no row and no checkpoint; the retry applies it once', async () => {
  const before = await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM audit_events');
  const chained = Number(before.rows[0]!.n);
  const checkpointBefore = await checkpoint();
  let appended: AppendResult | undefined;
  for (let unit = 0; unit < 10; unit++)
    appended = await db.store.appendToStream(
      `brain-${100 + unit}`,
      Array.from({ length: 50 }, (_, i) => ({
        ...brainCreated(100 + unit, `brain ${unit}.${i}`),
        type: i === 0 ? 'BrainCreated' : 'BrainUpdated',
      })),
    );
  await db.readable(appended!.position);
  // The 300th new row fails as the server stores it: the COPY breaks off mid-stream.
  const failing = chained + 300;
  await db.pool.query(`
    CREATE FUNCTION refuse_audit_row() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'audit row % refused', NEW.seq; END $$`);
  await db.pool.query(
    `CREATE TRIGGER fail_row BEFORE INSERT ON ${events} FOR EACH ROW
       WHEN (NEW.seq = ${failing}) EXECUTE FUNCTION refuse_audit_row()`,
  );

  await expect(catchUp(1000)).rejects.toThrow(`audit row ${failing} refused`);
  const afterFailure = await db.pool.query<{ n: string; max: string }>(
    `SELECT count(*) AS n, max(seq) AS max FROM ${events}`,
  );
  expect(afterFailure.rows[0]).toEqual({ n: String(chained), max: String(chained) });
  expect(await checkpoint()).toBe(checkpointBefore);

  await db.pool.query(`DROP TRIGGER fail_row ON ${events}`);
  expect(await catchUp(1000)).toBe(500);
  const after = await db.pool.query<{ n: string; max: string; ids: string }>(
    `SELECT count(*) AS n, max(seq) AS max, count(DISTINCT event_id) AS ids FROM audit_events`,
  );
  expect(after.rows[0]).toEqual({
    n: String(chained + 500),
    max: String(chained + 500),
    ids: String(chained + 500),
  });
  expect(await verifyLedger({ store: db.store, pool: db.pool })).toMatchObject({
    ok: true,
    eventsChecked: chained + 500,
  });
});
