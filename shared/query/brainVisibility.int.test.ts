import pg from 'pg';
import { createTestDatabase } from '#tests/support/testPostgres';
import {
  VISIBILITIES,
  type Viewer,
  type Visibility,
  canSeeBrain,
  effectiveVisibility,
} from '#shared/domain/brains/visibility';
import {
  effectiveVisibilitySql,
  hiddenBrainSql,
  visibleBrainCount,
  visibleBrainSql,
} from './brainVisibility';
import { SqlConditions, sharedParams } from './sqlConditions';

/*
 * The rule in SQL agrees with the rule in TypeScript (shared/domain/brains/visibility) on every
 * combination: each visibility, an embargo past, ahead or missing, every kind of viewer (the
 * uploader, a collaborator, staff, a stranger, anonymous), NULLs included. Both clocks are the
 * database's: the brains' times are set relative to its now().
 */
let pool: pg.Pool;
let nowMs: number;

interface Row {
  readonly id: number;
  readonly visibility: Visibility;
  readonly embargoUntil: string | null;
  readonly uploaderId: number;
  readonly speciesId: number;
  readonly collaboratorIds: readonly number[];
}
const rows: Row[] = [];

const UPLOADER = 1;
const COLLABORATOR = 2;
const VIEWERS: readonly (readonly [string, Viewer])[] = [
  ['the uploader', { userId: UPLOADER, isStaff: false }],
  ['a collaborator', { userId: COLLABORATOR, isStaff: false }],
  ['staff', { userId: 9, isStaff: true }],
  ['a stranger', { userId: 3, isStaff: false }],
  ['anonymous', { userId: null, isStaff: false }],
];

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await createTestDatabase('visibility_sql'), max: 2 });
  await pool.query(`
    CREATE TABLE brains (id integer PRIMARY KEY, visibility text NOT NULL, embargo_until timestamptz,
                         uploader_id integer NOT NULL, species_id integer NOT NULL);
    CREATE TABLE brain_collaborators (brain_id integer, user_id integer, PRIMARY KEY (brain_id, user_id));
    CREATE TABLE species (id integer PRIMARY KEY, brains_count integer NOT NULL)`);
  const { rows: clock } = await pool.query<{ now: string }>(
    `SELECT (extract(epoch FROM now()) * 1000)::text AS now`,
  );
  nowMs = Number(clock[0]!.now);
  let id = 0;
  for (const visibility of VISIBILITIES)
    for (const embargo of [null, -60_000, 3_600_000])
      for (const shared of [false, true])
        rows.push({
          id: ++id,
          visibility,
          embargoUntil: embargo === null ? null : new Date(nowMs + embargo).toISOString(),
          uploaderId: UPLOADER,
          speciesId: 1 + (id % 3),
          collaboratorIds: shared ? [COLLABORATOR] : [],
        });
  for (const row of rows) {
    await pool.query('INSERT INTO brains VALUES ($1, $2, $3, $4, $5)', [
      row.id,
      row.visibility,
      row.embargoUntil,
      row.uploaderId,
      row.speciesId,
    ]);
    for (const user of row.collaboratorIds)
      await pool.query('INSERT INTO brain_collaborators VALUES ($1, $2)', [row.id, user]);
  }
  await pool.query(`INSERT INTO species SELECT species_id, count(*) FROM brains GROUP BY species_id`);
});
afterAll(() => pool?.end());

async function idsWhere(build: (conditions: SqlConditions) => string | undefined): Promise<number[]> {
  const conditions = new SqlConditions();
  const sql = build(conditions);
  const { rows: found } = await pool.query<{ id: number }>(
    `SELECT b.id FROM brains b WHERE ${sql ?? 'true'} ORDER BY b.id`,
    conditions.params(),
  );
  return found.map((row) => row.id);
}

test.each(VIEWERS)('%s: visibleBrainSql and hiddenBrainSql agree with canSeeBrain', async (_, viewer) => {
  const seen = rows.filter((row) => canSeeBrain(row, viewer, nowMs)).map((row) => row.id);
  expect(await idsWhere((c) => visibleBrainSql(c, viewer))).toEqual(seen);
  const hidden = rows
    .filter((row) => row.visibility !== 'public' && !canSeeBrain(row, viewer, nowMs))
    .map((row) => row.id);
  // Staff: nothing is hidden (undefined: no condition to add).
  if (viewer.isStaff) expect(hiddenBrainSql(new SqlConditions(), viewer)).toBeUndefined();
  else expect(await idsWhere((c) => hiddenBrainSql(c, viewer))).toEqual(hidden);
  // What every species shows: its stored count less what the viewer may not see.
  const conditions = new SqlConditions();
  const counted = visibleBrainCount(sharedParams(conditions), viewer, {
    stored: 's.brains_count',
    column: 'species_id',
    ownerId: 's.id',
  });
  const { rows: counts } = await pool.query<{ id: number; n: number }>(
    `SELECT s.id, ${counted.count} AS n FROM species s ${counted.join} ORDER BY s.id`,
    conditions.params(),
  );
  expect(counts).toEqual(
    [1, 2, 3].map((species) => ({
      id: species,
      n: rows.filter((row) => row.speciesId === species && canSeeBrain(row, viewer, nowMs)).length,
    })),
  );
});

test.each(VISIBILITIES)('effectiveVisibilitySql(%s) agrees with effectiveVisibility', async (visibility) => {
  const expected = rows.filter((row) => effectiveVisibility(row, nowMs) === visibility).map((row) => row.id);
  expect(await idsWhere(() => effectiveVisibilitySql(visibility))).toEqual(expected);
});
