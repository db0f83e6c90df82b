import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Pool } from 'pg';
import { allProjections } from '#services/projector/projections/allProjections';
import { categoriesProjection } from '#services/projector/projections/categoriesProjection';
import { createPostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import { upcastingEventStore } from '#shared/eventStore/upcastingEventStore';
import { type GlobalPosition, comparePositions, parsePosition } from '#shared/eventStore/eventStore';
import type { Projection } from '#shared/projections/projection';
import { ProjectionRunner } from '#shared/projections/projectionRunner';
import { formatDifference } from '#shared/projections/verify/compareReadModels';
import { type VerifyReport, verifyReadModels } from '#shared/projections/verify/verifyReadModels';
import { brainForm, createTaxonomy, nifti, niftiBytes, type Taxonomy } from '#tests/e2e/brains/brainFixtures';
import { upload } from '#tests/e2e/uploads/uploadFixtures';
import { type CuratedService, startCuratedService } from '#tests/support/curatedService';
import { newUser } from '#tests/support/httpClient';
import { waitUntilCaughtUp } from '#tests/support/readModelAudit';
import { type ScriptRun, runOperatorScript } from '#tests/support/operatorTools';
import { serviceEnv } from '#tests/support/serviceEnv';
import { waitFor } from '#tests/support/waitFor';
import { startWriteLoad } from '#tests/support/writeLoad';

/**
 * verify-projections against the real all-in-one on the real PostgreSQL: a service with every kind
 * of data equals its rebuild, also while writers keep going; a row altered, deleted or added by
 * hand is named; nothing is left behind (shadow schemas), also when interrupted or killed.
 */

let curated: CuratedService;
let db: Client;
let taxonomy: Taxonomy;
const brains: { id: number; name: string }[] = [];

beforeAll(async () => {
  curated = await startCuratedService();
  const { api, staff } = curated;
  db = new Client({ connectionString: curated.service.databaseUrl });
  await db.connect();

  // Users, a personal token, a profile, the taxonomy, brains renamed and deleted, uploads.
  const researcher = await newUser(api);
  const other = await newUser(api);
  expect((await api.post('/api/tokens/', { token: researcher.token, json: { name: 'ci' } })).status).toBe(
    201,
  );
  expect((await api.patch('/api/profile/', { token: other.token, json: { bio: 'neurons' } })).status).toBe(
    200,
  );
  taxonomy = await createTaxonomy(api, staff);
  for (const [i, name] of ['Alpha', 'Beta', 'Gamma', 'Delta'].entries()) {
    const created = await api.post('/api/brains/', {
      token: i % 2 === 0 ? researcher.token : other.token,
      body: brainForm({ name, atlas: taxonomy.atlas.id, description: `brain ${name}` }, nifti()),
    });
    expect(created.status).toBe(201);
    brains.push({ id: created.body.id as number, name });
  }
  const renamed = await api.patch(`/api/brains/${brains[0]!.id}/`, {
    token: researcher.token,
    json: { name: 'Alpha renamed' },
  });
  expect(renamed.status).toBe(200);
  brains[0] = { id: brains[0]!.id, name: 'Alpha renamed' };
  expect((await api.delete(`/api/brains/${brains[3]!.id}/`, { token: other.token })).status).toBe(204);
  brains.pop();
  expect((await upload(api, researcher.token, 'scan.nii', niftiBytes())).status).toBe(201);
  expect((await upload(api, other.token, 'other.nii', niftiBytes())).status).toBe(201);
  await waitUntilCaughtUp(db, 30_000);
});

afterAll(async () => {
  await db?.end();
  await curated?.service.close();
});

/** verifyReadModels as the script runs it, in-process; the lines it would print. */
async function verify(
  options: { projections?: readonly Projection[]; signal?: AbortSignal; onProgress?: () => void } = {},
): Promise<{ report: VerifyReport; lines: string[] }> {
  const url = curated.service.databaseUrl;
  const store = createPostgresEventStore({ connectionString: url, poolSize: 2 });
  const live = new Pool({ connectionString: url, max: 3 });
  const lines: string[] = [];
  try {
    const report = await verifyReadModels({
      store: upcastingEventStore(store),
      live,
      projections: options.projections ?? allProjections,
      signal: options.signal,
      onProgress: options.onProgress,
      onDifference: (d) => lines.push(formatDifference(d)),
    });
    return { report, lines };
  } finally {
    await store.close();
    await live.end();
  }
}

async function shadowSchemas(): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT nspname AS name FROM pg_namespace WHERE nspname LIKE 'rm\\_verify\\_%'`,
  );
  return rows.map((r) => r.name);
}

/** Events in the store, all or up to a position. */
async function eventCount(upTo?: GlobalPosition): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM event_store.events
      WHERE $1::xid8 IS NULL OR (transaction_id, global_position) <= ($1::xid8, $2::bigint)`,
    [upTo?.commit.toString() ?? null, upTo?.prepare.toString() ?? null],
  );
  return Number(rows[0]!.n);
}

async function liveCheckpoint(): Promise<string> {
  const { rows } = await db.query<{ p: string }>(
    `SELECT min(commit_position || '.' || prepare_position) AS p FROM rm.projection_checkpoints WHERE status = 'live'`,
  );
  return rows[0]!.p;
}

test('a service with users, tokens, taxonomy, brains and uploads equals its rebuild', async () => {
  const { report, lines } = await verify();
  expect(lines).toEqual([]);
  expect(report.differences).toBe(0);
  expect(report.projections.filter((p) => p.position === undefined || p.note)).toEqual([]);
  expect(report.tables).toBe(allProjections.flatMap((p) => p.tables).length);
  // Exactly the events up to the position it compared at (the processor may still be appending).
  const at = report.projections[0]!.position!;
  expect(report.projections.every((p) => comparePositions(p.position!, at) === 0)).toBe(true);
  expect(report.events).toBe(await eventCount(at));
  // Every kind of row was there to compare.
  for (const table of [
    'users',
    'access_tokens',
    'categories',
    'species',
    'atlases',
    'brains',
    'file_uploads',
    'audit_events',
  ]) {
    const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM public."${table}"`);
    expect(Number(rows[0]!.n) > 0 ? table : `${table} is empty`).toBe(table);
  }
  expect(report.liveRows).toBeGreaterThan(report.events);
  expect(await shadowSchemas()).toEqual([]);
});

test('equals its rebuild while writers keep appending, comparing at the snapshot it took', async () => {
  const load = startWriteLoad(curated.service.url, 4, { atlasSpeciesId: taxonomy.species.id });
  try {
    const before = await eventCount();
    await waitFor('the load to write', () => eventCount(), {
      timeoutMs: 20_000,
      intervalMs: 100,
      until: (n) => n > before + 50,
    });
    const { report, lines } = await verify();
    expect(lines).toEqual([]);
    expect(report.differences).toBe(0);
    expect(report.events).toBeGreaterThan(before);
    // The live read models moved on past the position it compared at: it ran beside the projector.
    const compared = report.projections[0]!.position!;
    await waitFor('the projector to move on', liveCheckpoint, {
      timeoutMs: 20_000,
      intervalMs: 100,
      until: (p) => comparePositions(parsePosition(p)!, compared) > 0,
    });
  } finally {
    await load.stop();
  }
  expect(await shadowSchemas()).toEqual([]);
});

test('a projection version not installed in the database is skipped, with the reason', async () => {
  const newer: Projection = { ...categoriesProjection, version: categoriesProjection.version + 1 };
  const { report, lines } = await verify({ projections: [newer] });
  expect(lines).toEqual([]);
  expect(report.tables).toBe(0);
  expect(report.projections).toEqual([
    expect.objectContaining({
      name: 'categories',
      position: undefined,
      note: expect.stringMatching(
        /^not installed in this database \(it has v\d+ live; the service runs another version/,
      ),
    }),
  ]);
});

test('a version being built (a swap in progress) is compared at its own checkpoint, from its own tables', async () => {
  // A next version of categories installed beside the live one and caught up, not swapped in yet.
  const next: Projection = { ...categoriesProjection, version: categoriesProjection.version + 1 };
  const live = new Pool({ connectionString: curated.service.databaseUrl, max: 2 });
  const store = createPostgresEventStore({ connectionString: curated.service.databaseUrl, poolSize: 1 });
  try {
    await new ProjectionRunner({
      store: upcastingEventStore(store),
      pool: live,
      projections: [next],
    }).catchUp();
    const { rows } = await db.query<{ status: string }>(
      `SELECT status FROM rm.projection_checkpoints WHERE projection = 'categories' AND version = $1`,
      [next.version],
    );
    expect(rows).toEqual([{ status: 'building' }]);
    const clean = await verify({ projections: [next] });
    expect(clean.lines).toEqual([]);
    expect(clean.report.tables).toBe(next.tables.length);
    expect(clean.report.projections[0]!.note).toMatch(
      /^version \d+ is being built \(a version swap is in progress\): compared at its own checkpoint \d+\.\d+$/,
    );
    // Its tables are compared, not the live version's behind the views.
    await db.query(
      `UPDATE rm.categories_v${next.version} SET name = 'in the next version only' WHERE id = $1`,
      [taxonomy.category.id],
    );
    const { lines } = await verify({ projections: [next] });
    expect(lines).toEqual([
      `categories: row id=${taxonomy.category.id} differs: name live="in the next version only" rebuilt="${taxonomy.category.name}"`,
    ]);
  } finally {
    await db.query(`DELETE FROM rm.projection_checkpoints WHERE projection = 'categories' AND version = $1`, [
      next.version,
    ]);
    for (const table of next.tables) await db.query(`DROP TABLE IF EXISTS rm."${table}_v${next.version}"`);
    await store.close();
    await live.end();
  }
});

test('interrupted, or killed before, it leaves no shadow schema behind', async () => {
  // A run killed outright left its schema (and no one holds its lock): the next run drops it.
  await db.query(`CREATE SCHEMA rm_verify_1_deadbeef`);
  await db.query(`CREATE TABLE rm_verify_1_deadbeef.brains_v1 (id integer)`);
  const aborted = new AbortController();
  await expect(
    verify({ signal: aborted.signal, onProgress: () => aborted.abort(new Error('Ctrl-C')) }),
  ).rejects.toThrow('Ctrl-C');
  expect(await shadowSchemas()).toEqual([]);
});

/** The real script, as `npm run verify-projections` runs it (here from the sources), with DATABASE_URL. */
async function runScript(extraEnv: Record<string, string> = {}): Promise<ScriptRun> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'catalogue-verify-'));
  try {
    const env = serviceEnv(curated.service.databaseUrl, dataDir, '0', extraEnv);
    return await runOperatorScript('services/projector/verifyProjections.ts', env);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

test('the script names a row altered by hand, one deleted and one added, and exits 1', async () => {
  await waitUntilCaughtUp(db, 30_000);
  const [altered, deleted] = [brains[1]!, brains[2]!];
  // As the owner of the read models, behind the projector's back.
  await db.query(`UPDATE brains SET name = 'altered by hand' WHERE id = $1`, [altered.id]);
  await db.query(`DELETE FROM brains WHERE id = $1`, [deleted.id]);
  await db.query(`INSERT INTO audit_references (ref, seq) VALUES ('species:0', 1)`);

  const run = await runScript();
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 1, stderr: expect.any(String) });
  const lines = run.stdout.trim().split('\n');
  expect(lines).toEqual([
    `brains: row id=${altered.id} differs: name live="altered by hand" rebuilt="${altered.name}"`,
    `brains: row id=${deleted.id} missing in live`,
    'audit_references: row ref=species:0, seq=1 extra in live',
    expect.stringMatching(
      /^verify-projections: 3 difference\(s\) from a rebuild: \d+ table\(s\) of \d+ read model\(s\) at position \d+\.\d+, \d+ live row\(s\), \d+ event\(s\) rebuilt in [\d.]+ s, compared in [\d.]+ s$/,
    ),
  ]);
  expect(run.stderr).toMatch(/verifying the read models of DATABASE_URL/);
  expect(run.stderr).toMatch(/rebuilding: \d+\/\d+ events applied/);
  expect(await shadowSchemas()).toEqual([]);
});

test('with SEARCH_BACKEND=elasticsearch the index is said to be skipped; the PostgreSQL tables are still compared', async () => {
  const run = await runScript({ SEARCH_BACKEND: 'elasticsearch', ELASTICSEARCH_URL: 'http://127.0.0.1:9' });
  const lines = run.stdout.trim().split('\n');
  expect({ code: run.code, lines }).toEqual({
    code: 1, // the rows altered by the test above are still there
    lines: expect.arrayContaining([
      expect.stringMatching(/^skipped: elasticsearch index not compared \(.+\)$/),
      expect.stringMatching(/^verify-projections: 3 difference\(s\) from a rebuild: /),
    ]),
  });
});
