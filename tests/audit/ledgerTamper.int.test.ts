import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { formatPosition, type NewEvent, type RecordedEvent } from '#shared/eventStore/eventStore';
import { ProjectionRunner } from '#shared/projections/projectionRunner';
import { lastLedgerVerification } from '#shared/audit/ledgerVerifications';
import { ledgerProjection } from '#services/projector/projections/ledgerProjection';
import { type LedgerVerification, verifyLedger } from '#services/projector/verifyLedger';
import { eventStoreDatabase } from '#tests/support/eventStoreDatabase';
import { type ScriptRun, runOperatorScript } from '#tests/support/operatorTools';
import { serviceEnv } from '#tests/support/serviceEnv';

/**
 * Tampering with the real PostgreSQL event table, as its owner with the immutability trigger
 * (m0002ForbidEventChanges) disabled: verify-ledger names the first event altered, removed or
 * inserted, and a ledger row edited; the untouched store, and the store once each change is undone,
 * verify clean. Small pages, so the breaks fall across page boundaries too.
 */
const db = eventStoreDatabase('ledger_tamper');
const PAGE = 7;
let events: RecordedEvent[];

const metadata = (actor: string) => ({
  actor,
  requestId: randomUUID(),
  correlationId: randomUUID(),
  causationId: null,
  schemaVersion: 1,
});

const event = (type: string, data: Record<string, unknown>, actor = '1'): NewEvent => ({
  id: randomUUID(),
  type,
  data,
  metadata: metadata(actor),
});

beforeAll(async () => {
  // One event per transaction and several per transaction, in many streams.
  for (let n = 1; n <= 12; n++) {
    await db.store.appendToStream(`user-${n}`, [
      event(
        'UserRegistered',
        { userId: n, username: `u${n}`, email: `u${n}@example.org`, passwordHash: 'scrypt$secret' },
        'system',
      ),
      event(
        'AccessTokenIssued',
        { userId: n, tokenId: randomUUID(), name: 'login', tokenHash: 'h', createdAt: 'now' },
        'system',
      ),
    ]);
    await db.store.appendToStream(`brain-${n}`, [
      event(
        'BrainCreated',
        { brainId: n, name: `Brain ${n}`, speciesId: 1 + (n % 3), description: 'é 😀 "quoted"' },
        String(n),
      ),
    ]);
  }
  await chainAll();
  events = await db.store.readAll({ maxCount: 1000 });
  expect(events).toHaveLength(36);
});

/** The ledger projection alone, caught up: the ledger as the projector keeps it. */
async function chainAll(): Promise<void> {
  await new ProjectionRunner({ store: db.store, pool: db.pool, projections: [ledgerProjection] }).catchUp();
}

/**
 * Segments of the parallel check over 36 rows: seq 1-12, 13-24, 25-36 (38 rows: 1-12, 13-25, 26-38).
 * With pages of 7, the first segment's second page crosses from seq 9 to 10 (one digit to two).
 */
const WORKERS = 3;

/**
 * verify-ledger three ways: the one-thread walk, the links checked straight from the tables in this
 * thread, and segments checked by WORKERS worker threads (whatever the count of rows). All must give
 * the same outcome, count and message: the direct checks name the first broken link in seq order, as
 * the walk does. Answers the walk's result.
 */
async function verify(fromSeq?: number): Promise<LedgerVerification> {
  const options = { store: db.store, pool: db.pool, pageSize: PAGE, fromSeq };
  const walked = await verifyLedger(options);
  const comparable = ({ startedAt: _s, finishedAt: _f, ...rest }: LedgerVerification) => rest;
  for (const workers of [1, WORKERS]) {
    const progress: number[] = [];
    const direct = await verifyLedger({
      ...options,
      direct: { connectionString: db.url, workers, minEvents: 0 },
      onProgress: (checked, total) => {
        expect(total).toBe(walked.head.count - walked.fromSeq + 1);
        progress.push(checked);
      },
    });
    expect(comparable(direct)).toEqual(comparable(walked));
    // Progress only grows, within the total.
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(Math.max(...progress)).toBeLessThanOrEqual(walked.head.count - walked.fromSeq + 1);
  }
  return walked;
}

/** Runs `work` as the table's owner with the immutability trigger off, in one transaction. */
async function tamper(work: (client: pg.PoolClient) => Promise<unknown>): Promise<void> {
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('ALTER TABLE event_store.events DISABLE TRIGGER events_are_immutable');
    await work(client);
    await client.query('ALTER TABLE event_store.events ENABLE TRIGGER events_are_immutable');
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

const at = (seq: number): RecordedEvent => events[seq - 1]!;
/** "ledger verified: 36 events, head <position of the 36th> <hash>". */
const cleanMessage = (): RegExp => {
  const head = events[events.length - 1]!;
  const position = formatPosition(head.position).replace('.', '\\.');
  return new RegExp(`^ledger verified: 36 events, head ${position} [0-9a-f]{64}$`);
};

test('the untouched store verifies clean, head and count as the ledger has them', async () => {
  const result = await verify();
  expect(result).toMatchObject({
    ok: true,
    eventsChecked: 36,
    newerEvents: 0,
    fault: undefined,
  });
  expect(result.message).toMatch(cleanMessage());
  const { rows } = await db.pool.query<{ hash: Buffer }>('SELECT hash FROM ledger WHERE seq = 36');
  expect(result.head.hash.equals(rows[0]!.hash)).toBe(true);
  expect(result.head.position).toBe(formatPosition(at(36).position));
});

test("an event's data altered by the owner: exit names that event's position", async () => {
  const victim = at(20);
  await tamper((c) =>
    c.query(
      `UPDATE event_store.events SET data = jsonb_set(data, '{name}', '"forged"') WHERE event_id = $1`,
      [victim.id],
    ),
  );
  try {
    const result = await verify();
    expect(result).toMatchObject({ ok: false, eventsChecked: 19, fault: { kind: 'altered', seq: 20 } });
    expect(result.message).toBe(
      `event altered at position ${formatPosition(victim.position)} (event ${victim.id}, seq 20)`,
    );
  } finally {
    await tamper((c) =>
      c.query(`UPDATE event_store.events SET data = $2 WHERE event_id = $1`, [victim.id, victim.data]),
    );
  }
  expect(await verify()).toMatchObject({ ok: true, eventsChecked: 36 });
});

test('metadata altered (the actor), and the first event altered: both named', async () => {
  for (const seq of [1, 36]) {
    const victim = at(seq);
    await tamper((c) =>
      c.query(
        `UPDATE event_store.events SET metadata = jsonb_set(metadata, '{actor}', '"999"') WHERE event_id = $1`,
        [victim.id],
      ),
    );
    try {
      expect((await verify()).message).toBe(
        `event altered at position ${formatPosition(victim.position)} (event ${victim.id}, seq ${seq})`,
      );
    } finally {
      await tamper((c) =>
        c.query(
          `UPDATE event_store.events SET metadata = jsonb_set(metadata, '{actor}', to_jsonb($2::text)) WHERE event_id = $1`,
          [victim.id, victim.metadata.actor],
        ),
      );
    }
  }
  expect(await verify()).toMatchObject({ ok: true });
});

/** Deletes the event (as the owner) for the duration of `check`, then puts the very same row back. */
async function withoutEvent(victim: RecordedEvent, check: () => Promise<void>): Promise<void> {
  const { rows } = await db.pool.query<Record<string, unknown>>(
    'SELECT * FROM event_store.events WHERE event_id = $1',
    [victim.id],
  );
  const row = rows[0]!;
  await tamper((c) => c.query('DELETE FROM event_store.events WHERE event_id = $1', [victim.id]));
  try {
    await check();
  } finally {
    await tamper((c) =>
      c.query(
        `INSERT INTO event_store.events (global_position, transaction_id, stream_name, stream_revision, event_id, event_type, data, metadata, recorded_at)
         VALUES ($1, $2::xid8, $3, $4, $5, $6, $7, $8, $9)`,
        [
          row.global_position,
          row.transaction_id,
          row.stream_name,
          row.stream_revision,
          row.event_id,
          row.event_type,
          row.data,
          row.metadata,
          row.recorded_at,
        ],
      ),
    );
  }
}

test('an event deleted: named as removed at its position; the last one too', async () => {
  for (const seq of [14, PAGE, 36]) {
    const victim = at(seq);
    await withoutEvent(victim, async () => {
      const result = await verify();
      expect(result).toMatchObject({ ok: false, fault: { kind: 'removed', seq, eventId: victim.id } });
      expect(result.message).toMatch(
        new RegExp(
          `^event removed at position ${formatPosition(victim.position).replace('.', '\\.')} \\(event ${victim.id}, seq ${seq}\\)`,
        ),
      );
    });
  }
  expect(await verify()).toMatchObject({ ok: true, eventsChecked: 36 });
});

test('an event inserted out of order (between two chained events): named as inserted at its position', async () => {
  // Events 9 and 10 are in different transactions; a row in 9's transaction with a later sequence
  // number sorts right after 9, where no event was when the ledger chained 10.
  const [before, after] = [at(9), at(10)];
  expect(before.position.commit).toBeLessThan(after.position.commit);
  const id = randomUUID();
  const { rows } = await db.pool.query<{ n: string }>(
    "SELECT nextval(pg_get_serial_sequence('event_store.events', 'global_position')) AS n",
  );
  const inserted = `${before.position.commit}.${rows[0]!.n}`;
  await tamper((c) =>
    c.query(
      `INSERT INTO event_store.events (global_position, transaction_id, stream_name, stream_revision, event_id, event_type, data, metadata, recorded_at)
       VALUES ($1, $2::xid8, 'brain-999', 0, $3, 'BrainDeleted', '{"brainId": 999}', $4, $5)`,
      [rows[0]!.n, before.position.commit.toString(), id, metadata('1'), before.metadata.recordedAt],
    ),
  );
  try {
    const result = await verify();
    expect(result).toMatchObject({
      ok: false,
      eventsChecked: 9,
      fault: { kind: 'inserted', seq: 10, eventId: id, position: inserted },
    });
    expect(result.message).toMatch(
      new RegExp(
        `^event inserted at position ${inserted.replace('.', '\\.')} \\(event ${id}, before seq 10\\)`,
      ),
    );
  } finally {
    await tamper((c) => c.query('DELETE FROM event_store.events WHERE event_id = $1', [id]));
  }
  expect(await verify()).toMatchObject({ ok: true });
});

test('two events swapped in the order are named as reordered', async () => {
  const [first, second] = [at(21), at(22)];
  expect(first.position.commit).not.toBe(second.position.commit);
  const swap = (a: RecordedEvent, b: RecordedEvent) =>
    tamper(async (c) => {
      // Through a free position: (transaction_id, global_position) of a moves to b's and back.
      await c.query('UPDATE event_store.events SET global_position = -1 WHERE event_id = $1', [a.id]);
      await c.query(
        'UPDATE event_store.events SET global_position = $2, transaction_id = $3::xid8 WHERE event_id = $1',
        [b.id, a.position.prepare.toString(), a.position.commit.toString()],
      );
      await c.query(
        'UPDATE event_store.events SET global_position = $2, transaction_id = $3::xid8 WHERE event_id = $1',
        [a.id, b.position.prepare.toString(), b.position.commit.toString()],
      );
    });
  await swap(first, second);
  try {
    const result = await verify();
    expect(result).toMatchObject({
      ok: false,
      eventsChecked: 20,
      fault: { kind: 'reordered', seq: 21, eventId: second.id },
    });
  } finally {
    // Restore: second is now at first's position and first at second's; put each back.
    await tamper(async (c) => {
      await c.query('UPDATE event_store.events SET global_position = -1 WHERE event_id = $1', [second.id]);
      await c.query(
        'UPDATE event_store.events SET global_position = $2, transaction_id = $3::xid8 WHERE event_id = $1',
        [first.id, first.position.prepare.toString(), first.position.commit.toString()],
      );
      await c.query(
        'UPDATE event_store.events SET global_position = $2, transaction_id = $3::xid8 WHERE event_id = $1',
        [second.id, second.position.prepare.toString(), second.position.commit.toString()],
      );
    });
  }
  expect(await verify()).toMatchObject({ ok: true });
});

test("a ledger row's hash or event id edited in the table is named as the ledger edited at that seq", async () => {
  const { rows } = await db.pool.query<{ hash: Buffer; event_id: string }>(
    'SELECT hash, event_id FROM ledger WHERE seq = 5',
  );
  const original = rows[0]!;
  await db.pool.query(`UPDATE ledger SET hash = sha256('forged') WHERE seq = 5`);
  try {
    const result = await verify();
    expect(result).toMatchObject({ ok: false, eventsChecked: 4, fault: { kind: 'ledger_edited', seq: 5 } });
    expect(result.message).toBe(
      `ledger row edited at seq 5 (position ${formatPosition(at(5).position)}, event ${at(5).id}): it does not follow from the events`,
    );
  } finally {
    await db.pool.query('UPDATE ledger SET hash = $1 WHERE seq = 5', [original.hash]);
  }
  await db.pool.query('UPDATE ledger SET event_id = $1 WHERE seq = 5', [randomUUID()]);
  try {
    expect(await verify()).toMatchObject({ ok: false, fault: { kind: 'ledger_edited', seq: 5 } });
  } finally {
    await db.pool.query('UPDATE ledger SET event_id = $1 WHERE seq = 5', [original.event_id]);
  }
  await db.pool.query('CREATE TABLE ledger_row_kept AS SELECT * FROM ledger WHERE seq = 30');
  await db.pool.query('DELETE FROM ledger WHERE seq = 30');
  try {
    expect(await verify()).toMatchObject({
      ok: false,
      eventsChecked: 29,
      fault: { kind: 'ledger_edited', seq: 30 },
    });
  } finally {
    await db.pool.query('INSERT INTO ledger SELECT * FROM ledger_row_kept');
    await db.pool.query('DROP TABLE ledger_row_kept');
  }
  expect(await verify()).toMatchObject({ ok: true, eventsChecked: 36 });
});

/** Alters the data of the events at these seqs for the duration of `check`, then restores them. */
async function withAltered(seqs: number[], check: () => Promise<void>): Promise<void> {
  const victims = seqs.map(at);
  await tamper((c) =>
    c.query(
      `UPDATE event_store.events SET data = jsonb_set(data, '{forged}', 'true') WHERE event_id = ANY($1)`,
      [victims.map((v) => v.id)],
    ),
  );
  try {
    await check();
  } finally {
    await tamper(async (c) => {
      for (const victim of victims)
        await c.query('UPDATE event_store.events SET data = $2 WHERE event_id = $1', [
          victim.id,
          victim.data,
        ]);
    });
  }
}

test('in parallel segments: a break at the last and the first link of a segment, the first of several breaks, a missing row before a boundary', async () => {
  // verify() holds the parallel outcome equal to the walk's; these assert the walk's too.
  for (const seq of [12, 13, 24, 25]) {
    await withAltered([seq], async () => {
      expect(await verify()).toMatchObject({
        ok: false,
        eventsChecked: seq - 1,
        fault: { kind: 'altered', seq, eventId: at(seq).id },
      });
    });
  }
  // Breaks in several segments: the first in seq order is named, whichever segment ends first.
  for (const [seqs, first] of [
    [[25, 15], 15],
    [[36, 20, 30], 20],
    [[1, 19, 36], 1],
    [[12, 13], 12],
  ] as const) {
    await withAltered([...seqs], async () => {
      expect(await verify()).toMatchObject({ ok: false, fault: { kind: 'altered', seq: first } });
    });
  }
  // The ledger row a segment would start after is gone: the segment before runs on and names it.
  await db.pool.query('CREATE TABLE ledger_row_24 AS SELECT * FROM ledger WHERE seq = 24');
  await db.pool.query('DELETE FROM ledger WHERE seq = 24');
  try {
    expect(await verify()).toMatchObject({
      ok: false,
      eventsChecked: 23,
      fault: { kind: 'ledger_edited', seq: 24 },
    });
  } finally {
    await db.pool.query('INSERT INTO ledger SELECT * FROM ledger_row_24');
    await db.pool.query('DROP TABLE ledger_row_24');
  }
  // A segment's first row edited: named as the ledger edited, not the event.
  const { rows } = await db.pool.query<{ hash: Buffer }>('SELECT hash FROM ledger WHERE seq = 13');
  await db.pool.query(`UPDATE ledger SET hash = sha256('forged') WHERE seq = 13`);
  try {
    expect(await verify()).toMatchObject({
      ok: false,
      eventsChecked: 12,
      fault: { kind: 'ledger_edited', seq: 13 },
    });
  } finally {
    await db.pool.query('UPDATE ledger SET hash = $1 WHERE seq = 13', [rows[0]!.hash]);
  }
  expect(await verify()).toMatchObject({ ok: true, eventsChecked: 36 });
});

test('events newer than the ledger are counted, not a failure', async () => {
  const late = await db.store.appendToStream('brain-100', [
    event('BrainCreated', { brainId: 100, name: 'late' }),
    event('BrainUpdated', { brainId: 100, changes: { name: 'later' } }),
  ]);
  await db.readable(late.position);
  try {
    const result = await verify();
    expect(result).toMatchObject({ ok: true, eventsChecked: 36, newerEvents: 2 });
    expect(result.message).toMatch(/; 2 newer events not yet chained$/);
  } finally {
    await chainAll();
  }
  expect(await verify()).toMatchObject({ ok: true, eventsChecked: 38, newerEvents: 0 });
});

// (After the test above: 38 events chained.)
test('from a seq on: starts from the ledger row before it, finds a fault after it, not one before', async () => {
  const late = at(30);
  const early = at(4);
  const { rows } = await db.pool.query<{ hash: Buffer }>('SELECT hash FROM ledger WHERE seq = 38');
  expect(await verify(25)).toMatchObject({
    ok: true,
    fromSeq: 25,
    eventsChecked: 14,
    head: { count: 38, hash: rows[0]!.hash },
    message: expect.stringMatching(/^ledger verified: 14 events \(seq 25 to 38\), head /),
  });
  await tamper((c) =>
    c.query(`UPDATE event_store.events SET data = '{}' WHERE event_id = ANY($1)`, [[late.id, early.id]]),
  );
  try {
    const from = verify;
    expect(await from(10)).toMatchObject({
      ok: false,
      eventsChecked: 20,
      fault: { kind: 'altered', seq: 30 },
    });
    expect(await from(1)).toMatchObject({ ok: false, eventsChecked: 3, fault: { kind: 'altered', seq: 4 } });
    expect(await from(31)).toMatchObject({ ok: true, eventsChecked: 8 });
    expect(await from(99)).toMatchObject({ ok: true, eventsChecked: 0 });
  } finally {
    await tamper(async (c) => {
      for (const victim of [late, early])
        await c.query('UPDATE event_store.events SET data = $2 WHERE event_id = $1', [
          victim.id,
          victim.data,
        ]);
    });
  }
  expect(await verify()).toMatchObject({ ok: true, eventsChecked: 38 });
});

/** The real script, as `npm run verify-ledger` runs it (from the sources), with DATABASE_URL. */
async function runScript(args: string[] = []): Promise<ScriptRun> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'catalogue-verify-ledger-'));
  try {
    return await runOperatorScript(
      'services/projector/verifyLedger.ts',
      serviceEnv(db.url, dataDir, '0'),
      args,
    );
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

test('the script exits 1 naming the altered event, 0 once undone, and records each run', async () => {
  const all = await db.store.readAll({ maxCount: 1000 });
  const victim = all[2]!;
  await tamper((c) =>
    c.query(
      `UPDATE event_store.events SET data = jsonb_set(data, '{passwordHash}', '"scrypt$forged"') WHERE event_id = $1`,
      [victim.id],
    ),
  );
  let failed;
  try {
    failed = await runScript();
  } finally {
    await tamper((c) =>
      c.query(`UPDATE event_store.events SET data = $2 WHERE event_id = $1`, [victim.id, victim.data]),
    );
  }
  const position = formatPosition(victim.position);
  expect(failed).toEqual({
    code: 1,
    stdout: `event altered at position ${position} (event ${victim.id}, seq 3)\n`,
    stderr: '',
  });
  expect(await lastLedgerVerification(db.pool)).toMatchObject({
    ok: false,
    eventsChecked: 2,
    firstBadPosition: position,
    message: `event altered at position ${position} (event ${victim.id}, seq 3)`,
  });

  const clean = await runScript(['--json']);
  expect(clean.code).toBe(0);
  const report = JSON.parse(clean.stdout) as Record<string, unknown>;
  expect(report).toMatchObject({ ok: true, events_checked: 38, newer_events: 0, fault: null });
  const recorded = await lastLedgerVerification(db.pool);
  expect(recorded).toMatchObject({ ok: true, eventsChecked: 38, firstBadPosition: null });
  expect(recorded!.finishedAt.getTime()).toBeGreaterThanOrEqual(recorded!.startedAt.getTime());

  const routine = await runScript(['--from-seq', '30']);
  expect(routine).toMatchObject({
    code: 0,
    stdout: expect.stringMatching(/^ledger verified: 9 events \(seq 30 to 38\), head /),
  });
  const wrong = await runScript(['--from-seq', '0']);
  expect(wrong).toMatchObject({
    code: 2,
    stdout: '',
    stderr: expect.stringContaining('--from-seq takes a seq'),
  });
});
