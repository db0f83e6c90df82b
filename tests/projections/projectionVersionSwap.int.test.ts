import { randomUUID } from 'node:crypto';
import type { AppendResult, GlobalPosition, RecordedEvent } from '#shared/eventStore/eventStore';
import type { Projection } from '#shared/projections/projection';
import { ProjectionRunner } from '#shared/projections/projectionRunner';
import { ProjectionProgress } from '#shared/projections/projectionProgress';
import { eventStoreDatabase } from '#tests/support/eventStoreDatabase';
import { waitFor } from '#tests/support/waitFor';

/** A counter read model whose v2 also keeps the last payload: same name, new version. */
const notes = (version: number): Projection => ({
  name: 'notes',
  version,
  tables: ['notes'],
  eventTypes: new Set(['NoteTaken']),
  async createTables({ client, table }) {
    await client.query(
      version === 1
        ? `CREATE TABLE ${table('notes')} (id text PRIMARY KEY, taken integer NOT NULL)`
        : `CREATE TABLE ${table('notes')} (id text PRIMARY KEY, taken integer NOT NULL, last_text text)`,
    );
  },
  async apply({ client, table }, events: readonly RecordedEvent[]) {
    for (const e of events) {
      const { id, text } = e.data as { id: string; text: string };
      await client.query(
        version === 1
          ? `INSERT INTO ${table('notes')} VALUES ($1, 1) ON CONFLICT (id) DO UPDATE SET taken = ${table('notes')}.taken + 1`
          : `INSERT INTO ${table('notes')} VALUES ($1, 1, $2) ON CONFLICT (id) DO UPDATE SET taken = ${table('notes')}.taken + 1, last_text = $2`,
        version === 1 ? [id] : [id, text],
      );
    }
    return [];
  },
});

const db = eventStoreDatabase('swap');

async function takeNotes(count: number): Promise<GlobalPosition> {
  let last: AppendResult | undefined;
  for (let i = 0; i < count; i++) {
    last = await db.store.appendToStream(`note-${i % 3}`, [
      {
        id: randomUUID(),
        type: 'NoteTaken',
        data: { id: `n${i % 3}`, text: `text ${i}` },
        metadata: { actor: 'test', requestId: null, correlationId: 'c', causationId: null, schemaVersion: 1 },
      },
    ]);
  }
  return last!.position;
}

const readNotes = async () =>
  (await db.pool.query<Record<string, unknown>>('SELECT * FROM notes ORDER BY id')).rows;

test('a new projection version is built beside the live one and swapped in without taking reads down', async () => {
  const v1Progress = new ProjectionProgress();
  const v1 = new ProjectionRunner({
    store: db.store,
    pool: db.pool,
    projections: [notes(1)],
    progress: v1Progress,
  });
  v1.start();
  expect(await v1Progress.waitFor(await takeNotes(30), 10_000)).toBe(true);
  await v1.stop();
  expect(await readNotes()).toEqual([
    { id: 'n0', taken: 10 },
    { id: 'n1', taken: 10 },
    { id: 'n2', taken: 10 },
  ]);

  // v2 starts: until it has caught up, the view still serves v1's rows, never an empty or half table.
  const v2Progress = new ProjectionProgress();
  const v2 = new ProjectionRunner({
    store: db.store,
    pool: db.pool,
    projections: [notes(2)],
    progress: v2Progress,
    batchSize: 5,
  });
  const readsDuringSwap: number[] = [];
  let reading = true;
  const reader = (async () => {
    while (reading) {
      const rows = await readNotes();
      readsDuringSwap.push(rows.reduce((n, r) => n + Number(r.taken), 0));
    }
  })();
  v2.start();
  const head = await takeNotes(6);
  await waitFor('v2 to be readable (notes with last_text)', readNotes, {
    timeoutMs: 15_000,
    intervalMs: 20,
    until: (notes) => 'last_text' in (notes[0] ?? {}),
  });
  expect(await v2Progress.waitFor(head, 10_000)).toBe(true);
  reading = false;
  await reader;
  await v2.stop();

  expect(await readNotes()).toEqual([
    { id: 'n0', taken: 12, last_text: 'text 3' },
    { id: 'n1', taken: 12, last_text: 'text 4' },
    { id: 'n2', taken: 12, last_text: 'text 5' },
  ]);
  // Every read saw a complete model: v1's 30 notes, or v2 caught up, never a partial rebuild.
  expect(readsDuringSwap.length).toBeGreaterThan(0);
  for (const total of readsDuringSwap) expect(total).toBeGreaterThanOrEqual(30);
  const { rows } = await db.pool.query<{ version: number; status: string }>(
    'SELECT version, status FROM rm.projection_checkpoints WHERE projection = $1',
    ['notes'],
  );
  expect(rows).toEqual([{ version: 2, status: 'live' }]);
  const tables = await db.pool.query<{ t: string }>(
    `SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'rm' AND table_name LIKE 'notes_v%'`,
  );
  expect(tables.rows.map((r) => r.t)).toEqual(['notes_v2']);
});
