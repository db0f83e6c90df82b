import { Pool } from 'pg';
import { auditLogProjection } from '#services/projector/projections/auditLogProjection';
import type { ProjectionContext } from '#shared/projections/projection';
import { type AuditRow, auditEntryJson, auditSelect } from '#services/query-api/features/audit/auditEntry';
import type { EventLogFilter } from '#services/query-api/features/audit/auditEventsFilter';
import { entryTexts, ndjsonPage, seqBounds } from '#services/query-api/features/audit/auditEventsQuery';
import { createTestDatabase } from '#tests/support/testPostgres';

/**
 * The event log's SQL against real PostgreSQL, on an audit log whose recorded times are often out
 * of order (a fifth of the events recorded up to 5 s before an event ordered ahead of them: the
 * "stragglers" `until` must still find): hundreds of random filters, each paged as a client pages
 * (`after` = the last position) and exported as NDJSON, must give exactly what filtering every row
 * here gives, in order.
 */
const ROWS = 1500;
const TYPES = [
  'BrainCreated',
  'BrainUpdated',
  'UserRegistered',
  'SpeciesCreated',
  'IdAllocated',
  'ValueReserved',
];
const INTERNAL = new Set(['IdAllocated', 'ValueReserved']);
const RESOURCES = ['brain', 'user', 'species', 'token', null] as const;
const BASE = Date.parse('2026-03-01T00:00:00Z');

interface Row {
  seq: number;
  commit: number;
  prepare: number;
  type: string;
  resourceType: string | null;
  resourceId: string | null;
  internal: boolean;
  at: number;
  actor: number | null;
  requestId: string;
}

let pool: Pool;
const rows: Row[] = [];
/** A seeded generator: a failure can be replayed. */
let seed = 20260301;
const random = (): number => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const uuidOf = (n: number): string => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

beforeAll(async () => {
  pool = new Pool({ connectionString: await createTestDatabase('eventlog'), max: 2 });
  const client = await pool.connect();
  try {
    const context = { client, table: (name: string) => name } as unknown as ProjectionContext;
    await auditLogProjection.createTables(context);
    // The indexes the service reads with, as a runner builds them once the log is live.
    for (const statement of auditLogProjection.readerIndexes?.(context) ?? []) await client.query(statement);
    await client.query('CREATE TABLE users (id integer PRIMARY KEY, username text)');
    await client.query(`INSERT INTO users VALUES (1, 'ada'), (2, 'grace'), (3, 'edsger')`);
  } finally {
    client.release();
  }
  let hwm = 0;
  for (let seq = 1; seq <= ROWS; seq++) {
    const type = pick(TYPES);
    const resourceType = pick(RESOURCES);
    const late = random() < 0.2 ? Math.floor(random() * 5000) : 0;
    const at = BASE + seq * 1000 - late;
    hwm = Math.max(hwm, at);
    const id = 1 + Math.floor(random() * 20);
    rows.push({
      seq,
      commit: 1000 + Math.floor(seq / 3),
      prepare: seq * 2,
      type,
      resourceType,
      resourceId: resourceType === null ? null : resourceType === 'token' ? uuidOf(id) : String(id),
      internal: INTERNAL.has(type),
      at,
      actor: random() < 0.2 ? null : 1 + Math.floor(random() * 4),
      requestId: `req-${Math.floor(seq / 4)}`,
    });
    (rows[rows.length - 1] as Row & { hwm: number }).hwm = hwm;
  }
  const column = <K extends keyof Row>(key: K) => rows.map((r) => r[key]);
  await pool.query(
    `INSERT INTO audit_events
       (seq, commit_position, prepare_position, event_id, event_type, stream_name, stream_revision, resource_type,
        resource_id, revision, internal, recorded_at, recorded_hwm, actor_id, request_id, data)
     SELECT s, c, p, gen_random_uuid(), t, 'stream-' || s, 0, rt, ri, 0, i, to_timestamp(a / 1000.0),
            to_timestamp(h / 1000.0), ac, rq, jsonb_build_object('n', s, 'text', E'line\\nbreak "quoted" – 脳 🧠',
              -- now and then an entry longer than a page's buffer guesses (it must grow)
              'pad', CASE WHEN s % 50 = 0 THEN repeat('脳', 2000) END)
       FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::boolean[],
                   $8::float8[], $9::float8[], $10::int[], $11::text[]) AS r (s, c, p, t, rt, ri, i, a, h, ac, rq)`,
    [
      column('seq'),
      column('commit'),
      column('prepare'),
      column('type'),
      column('resourceType'),
      column('resourceId'),
      column('internal'),
      column('at'),
      rows.map((r) => (r as Row & { hwm: number }).hwm),
      column('actor'),
      column('requestId'),
    ],
  );
  await pool.query('ANALYZE audit_events');
});

afterAll(() => pool?.end());

const positionOf = (r: Pick<Row, 'commit' | 'prepare'>): string => `${r.commit}.${r.prepare}`;
const after = (r: Row, p: { commit: bigint; prepare: bigint }): boolean =>
  BigInt(r.commit) > p.commit || (BigInt(r.commit) === p.commit && BigInt(r.prepare) > p.prepare);

function matches(r: Row, f: EventLogFilter): boolean {
  if (!f.includeInternal && r.internal) return false;
  if (
    f.resource &&
    (r.resourceType !== f.resource.type || (f.resource.id !== undefined && r.resourceId !== f.resource.id))
  )
    return false;
  if (f.types && !f.types.includes(r.type)) return false;
  if (f.actor !== undefined && r.actor !== f.actor) return false;
  if (f.requestId !== undefined && r.requestId !== f.requestId) return false;
  if (f.since && r.at < f.since.getTime()) return false;
  if (f.until && r.at >= f.until.getTime()) return false;
  return !f.after || after(r, f.after);
}

function randomFilter(): EventLogFilter {
  const time = (): Date => new Date(BASE + Math.floor(random() * (ROWS + 10) * 1000));
  const [a, b] = [time(), time()].sort((x, y) => x.getTime() - y.getTime()) as [Date, Date];
  const someRow = pick(rows);
  const filter: Record<string, unknown> = { includeInternal: random() < 0.5 };
  if (random() < 0.4) filter.types = [...new Set([pick(TYPES), ...(random() < 0.5 ? [pick(TYPES)] : [])])];
  if (random() < 0.6) filter.since = a;
  if (random() < 0.6) filter.until = random() < 0.3 ? new Date(a.getTime() + Math.floor(random() * 8000)) : b;
  if (random() < 0.2) filter.actor = 1 + Math.floor(random() * 4);
  if (random() < 0.2) {
    const type = pick(RESOURCES.filter((t) => t !== null));
    filter.resource = random() < 0.5 ? { type } : { type, id: type === 'token' ? uuidOf(3) : '3' };
  }
  if (random() < 0.1) filter.requestId = someRow.requestId;
  if (random() < 0.3)
    filter.after =
      random() < 0.5
        ? { commit: BigInt(someRow.commit), prepare: BigInt(someRow.prepare) }
        : { commit: BigInt(someRow.commit), prepare: BigInt(someRow.prepare + 1) }; // between two events
  return filter as unknown as EventLogFilter;
}

/**
 * Pages as the route does (entryTexts, the route's page): each next page is a new request with
 * `after` = the last position. Answers the entries, parsed.
 */
async function pageThrough(filter: EventLogFilter, limit: number): Promise<AuditEntry[]> {
  const seen: AuditEntry[] = [];
  let current = filter;
  for (;;) {
    const page = await entryTexts(pool, current, await seqBounds(pool, current), { from: 0, limit });
    seen.push(...page.entries.map((text) => JSON.parse(text) as AuditEntry));
    const last = page.positions[page.positions.length - 1];
    if (page.entries.length < limit || !last) return seen;
    const [commit, prepare] = last.split('.');
    current = { ...filter, after: { commit: BigInt(commit!), prepare: BigInt(prepare!) } };
  }
}

type AuditEntry = { position: string } & Record<string, unknown>;

/**
 * The reference: the rows at these seqs read here one way (every column, then auditEntryJson, the
 * entry as the history routes build theirs), in seq order.
 */
async function referenceEntries(seqs: readonly number[]): Promise<AuditEntry[]> {
  const { rows: read } = await pool.query<AuditRow>(
    `${auditSelect(true)} WHERE e.seq = ANY ($1::bigint[]) ORDER BY e.seq`,
    [seqs],
  );
  return read.map((r) => JSON.parse(JSON.stringify(auditEntryJson(r))) as AuditEntry);
}

async function exportAll(filter: EventLogFilter, pageRows: number): Promise<string> {
  const bounds = await seqBounds(pool, filter);
  let text = '';
  let from = bounds.after;
  for (;;) {
    const page = await ndjsonPage(pool, filter, bounds, { from, limit: pageRows, upTo: bounds.head });
    text += page.bytes.toString('utf8');
    if (page.count < pageRows) return text;
    from = page.lastSeq;
  }
}

test('the log has stragglers for `until` to find', () => {
  const stragglers = rows.filter((r, i) => i > 0 && r.at < (rows[i - 1] as Row & { hwm: number }).hwm);
  expect(stragglers.length).toBeGreaterThan(ROWS / 10);
});

test('random filters: every page and every export equals the rows filtered here, in order', async () => {
  for (let i = 0; i < 120; i++) {
    const filter = randomFilter();
    const matching = rows.filter((r) => matches(r, filter));
    const expected = matching.map(positionOf);
    const paged = await pageThrough(filter, 5 + Math.floor(random() * 150));
    expect({ filter, positions: paged.map((e) => e.position) }).toEqual({ filter, positions: expected });
    const exported = await exportAll(filter, 10 + Math.floor(random() * 300));
    const lines = exported === '' ? [] : exported.replace(/\n$/, '').split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { position: string }).position)).toEqual(expected);
    // The pages' entries and the export's lines are the reference's entries, field for field.
    const reference = await referenceEntries(matching.map((r) => r.seq));
    expect(paged).toEqual(reference);
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual(reference);
  }
});

test('since past every event: nothing, and no query for a page', async () => {
  const filter: EventLogFilter = { includeInternal: true, since: new Date(BASE + (ROWS + 100) * 1000) };
  const bounds = await seqBounds(pool, filter);
  expect(bounds.empty).toBe(true);
  expect(await entryTexts(pool, filter, bounds, { from: 0, limit: 10 })).toEqual({
    entries: [],
    positions: [],
  });
});
