import { randomUUID } from 'node:crypto';
import type { DomainEvent } from '#shared/commandHandling/handleCommand';
import { type GlobalPosition, comparePositions } from '#shared/eventStore/eventStore';
import { ProjectionRunner } from '#shared/projections/projectionRunner';
import { decideCategory } from '#shared/domain/categories/decide';
import { initialCategoryState } from '#shared/domain/categories/events';
import { decideSpecies } from '#shared/domain/species/decide';
import { initialSpeciesState } from '#shared/domain/species/events';
import { decideAtlas } from '#shared/domain/atlases/decide';
import { initialAtlasState } from '#shared/domain/atlases/events';
import { decideBrain, type BrainCommand } from '#shared/domain/brains/decide';
import { brainDecider, type BrainState } from '#shared/domain/brains/events';
import { categoriesProjection } from '#services/projector/projections/categoriesProjection';
import { speciesProjection } from '#services/projector/projections/speciesProjection';
import { atlasesProjection } from '#services/projector/projections/atlasesProjection';
import { brainsProjection } from '#services/projector/projections/brainsProjection';
import { countBrains } from '#services/query-api/features/brains/brainSql';
import { physicalTable } from '#shared/projections/projection';
import { SqlConditions } from '#shared/query/sqlConditions';
import { eventStoreDatabase } from '#tests/support/eventStoreDatabase';
import { waitFor } from '#tests/support/waitFor';

const projections = [categoriesProjection, speciesProjection, atlasesProjection, brainsProjection];
const staff = { userId: 1, isStaff: true };
const now = '2026-01-01T00:00:00.000Z';

const brains = new Map<number, BrainState>();
let lastAppended: GlobalPosition | undefined;

const db = eventStoreDatabase('catalogue');

async function append(stream: string, events: readonly DomainEvent[]): Promise<void> {
  ({ position: lastAppended } = await db.store.appendToStream(
    stream,
    events.map((e) => ({
      id: randomUUID(),
      type: e.type,
      data: e.data,
      metadata: { actor: '1', requestId: null, correlationId: 'c', causationId: null, schemaVersion: 1 },
    })),
  ));
}

async function brainCommand(brainId: number, command: BrainCommand): Promise<void> {
  const events = decideBrain(command, brains.get(brainId) ?? brainDecider.initialState());
  brains.set(brainId, events.reduce(brainDecider.evolve, brains.get(brainId) ?? brainDecider.initialState()));
  await append(`brain-${brainId}`, events);
}

const atlasOf = (atlasId: number, speciesId: number, categoryId: number) => ({
  found: { atlasId, speciesId, categoryId },
});

async function createBrain(brainId: number, atlas: ReturnType<typeof atlasOf>): Promise<void> {
  await brainCommand(brainId, {
    type: 'CreateBrain',
    data: {
      brainId,
      readableId: `brain-${brainId}`,
      uuid: randomUUID(),
      name: `Brain ${brainId}`,
      description: '',
      atlas,
      category: undefined,
      isReference: false,
      extraLink: '',
      website: '',
      color: '',
      verified: false,
      fileUploadId: null,
      actor: { userId: 7, isStaff: false },
      now,
    },
  });
}

/**
 * Events become readable only once no older transaction of the cluster is still open (readAll's
 * snapshot rule), and other test files share the cluster: wait (bounded) until the head covers
 * everything this file appended, or a catch-up could stop short.
 */
async function runProjections(): Promise<void> {
  const appended = lastAppended;
  if (appended)
    await waitFor('the appended events to become readable', () => db.store.headPosition(), {
      timeoutMs: 60_000,
      until: (head) => comparePositions(head, appended) >= 0,
    });
  const runner = new ProjectionRunner({ store: db.store, pool: db.pool, projections, batchSize: 7 });
  await runner.catchUp();
}

async function seedCatalogue(): Promise<void> {
  for (const [categoryId, name] of [
    [1, 'rodents'],
    [2, 'primates'],
  ] as const)
    await append(
      `category-${categoryId}`,
      decideCategory(
        {
          type: 'CreateCategory',
          data: { categoryId, name, description: '', imageKey: null, imageUrl: null, actor: staff, now },
        },
        initialCategoryState(),
      ),
    );
  for (const [speciesId, name, scientificName, categoryId] of [
    [1, 'mouse', 'Mus musculus', 1],
    [2, 'rhesus macaque', 'Macaca mulatta', 2],
  ] as const)
    await append(
      `species-${speciesId}`,
      decideSpecies(
        {
          type: 'CreateSpecies',
          data: { speciesId, name, scientificName, description: '', categoryId, actor: staff, now },
        },
        initialSpeciesState(),
      ),
    );
  for (const [atlasId, speciesId] of [
    [1, 1],
    [2, 1],
    [3, 2],
  ] as const)
    await append(
      `atlas-${atlasId}`,
      decideAtlas(
        {
          type: 'CreateAtlas',
          data: {
            atlasId,
            name: `Atlas ${atlasId}`,
            slug: `atlas-${atlasId}`,
            description: '',
            speciesId,
            isOfficial: false,
            verified: false,
            version: '',
            color: '',
            publicationUrl: '',
            actor: staff,
            now,
          },
        },
        initialAtlasState(),
      ),
    );
}

/** Every counter equals a count over the brains and atlases read models. */
async function countsDisagreeing(): Promise<unknown[]> {
  const { rows } = await db.pool.query(`
    SELECT 'category' AS kind, c.id, c.brains_count, c.atlases_count,
           (SELECT count(*)::int FROM brains b WHERE b.category_id = c.id) AS brains,
           (SELECT count(*)::int FROM atlases a JOIN species s ON s.id = a.species_id WHERE s.category_id = c.id) AS atlases
      FROM categories c
    UNION ALL
    SELECT 'species', s.id, s.brains_count, s.atlases_count,
           (SELECT count(*)::int FROM brains b WHERE b.species_id = s.id),
           (SELECT count(*)::int FROM atlases a WHERE a.species_id = s.id)
      FROM species s
    UNION ALL
    SELECT 'atlas', a.id, a.brains_count, 0, (SELECT count(*)::int FROM brains b WHERE b.atlas_id = a.id), 0
      FROM atlases a`);
  return rows.filter((r) => r.brains_count !== r.brains || r.atlases_count !== r.atlases);
}

/** brain_counts (the list's X-Total-Count) against a count over the brains, per placement. */
async function placementCountsDisagreeing(): Promise<unknown[]> {
  const { rows } = await db.pool.query(`
    SELECT * FROM
      (SELECT atlas_id, species_id, category_id, verified, brains::int AS kept
       FROM brain_counts WHERE brains <> 0) kept
    FULL JOIN
      (SELECT coalesce(atlas_id, 0) AS atlas_id, coalesce(species_id, 0) AS species_id, category_id,
              verified, count(*)::int AS counted
       FROM brains GROUP BY 1, 2, 3, 4) counted
    USING (atlas_id, species_id, category_id, verified)
    WHERE kept IS DISTINCT FROM counted`);
  return rows;
}

test('counts stay exact while brains are created, moved between atlases and species, and deleted', async () => {
  await seedCatalogue();
  for (let id = 1; id <= 12; id++)
    await createBrain(id, id % 3 === 0 ? atlasOf(3, 2, 2) : atlasOf(id % 2 ? 1 : 2, 1, 1));
  await runProjections();
  expect(await countsDisagreeing()).toEqual([]);
  expect(await placementCountsDisagreeing()).toEqual([]);
  const { rows: before } = await db.pool.query(
    'SELECT id, brains_count, atlases_count FROM categories ORDER BY id',
  );
  expect(before).toEqual([
    { id: 1, brains_count: 8, atlases_count: 2 },
    { id: 2, brains_count: 4, atlases_count: 1 },
  ]);

  // A brain moves from a mouse atlas to the macaque atlas (another species and category), one
  // moves between the two mouse atlases, one is filed under its category alone, two are deleted.
  await brainCommand(1, { type: 'UpdateBrain', data: { atlas: atlasOf(3, 2, 2), actor: staff, now } });
  await brainCommand(2, { type: 'UpdateBrain', data: { atlas: atlasOf(1, 1, 1), actor: staff, now } });
  await brainCommand(4, { type: 'UpdateBrain', data: { atlas: null, actor: staff, now } });
  await brainCommand(5, { type: 'DeleteBrain', data: { actor: staff, now } });
  await brainCommand(6, { type: 'DeleteBrain', data: { actor: staff, now } });
  // Verified by staff, and renamed (a change that moves no count).
  await brainCommand(7, { type: 'UpdateBrain', data: { verified: true, actor: staff, now } });
  await brainCommand(8, { type: 'UpdateBrain', data: { name: 'Renamed', actor: staff, now } });
  await runProjections();
  expect(await countsDisagreeing()).toEqual([]);
  expect(await placementCountsDisagreeing()).toEqual([]);
  const { rows: placements } = await db.pool.query(
    'SELECT sum(brains)::int AS all, sum(brains) FILTER (WHERE verified)::int AS verified FROM brain_counts',
  );
  expect(placements[0]).toEqual({ all: 10, verified: 1 });
  const { rows: after } = await db.pool.query(
    `SELECT (SELECT brains_count FROM categories WHERE id = 2) AS primates,
            (SELECT brains_count FROM species WHERE id = 1) AS mice,
            (SELECT brains_count FROM atlases WHERE id = 1) AS atlas1,
            (SELECT count(*)::int FROM brains) AS brains`,
  );
  expect(after[0]).toEqual({ primates: 4, mice: 5, atlas1: 3, brains: 10 });
  const { rows: moved } = await db.pool.query(
    'SELECT atlas_id, species_id, category_id, revision FROM brains WHERE id = 1',
  );
  expect(moved[0]).toEqual({ atlas_id: 3, species_id: 2, category_id: 2, revision: '1' });
});

test("the list's total still answers while brains v2 is rebuilt beside a live v1 (no brain_counts view yet)", async () => {
  const species1 = new SqlConditions();
  species1.where(`b.species_id = ${species1.param(1)}`);
  const filters = [new SqlConditions(), species1];
  const totals = async () => {
    const answered: number[] = [];
    for (const conditions of filters)
      answered.push(await countBrains(db.pool, { conditions, placementWhere: conditions.whereSql }));
    return answered;
  };
  const { rows } = await db.pool.query<{ all: number; mice: number }>(
    'SELECT count(*)::int AS all, (count(*) FILTER (WHERE species_id = 1))::int AS mice FROM brains',
  );
  const expected = [rows[0]!.all, rows[0]!.mice];
  expect(expected[0]).toBeGreaterThan(expected[1]!);
  expect(await totals()).toEqual(expected);

  // As v1 left the views: brains only (its columns are v2's).
  await db.pool.query('DROP VIEW brain_counts');
  try {
    expect(await totals()).toEqual(expected);
  } finally {
    await db.pool.query(
      `CREATE VIEW brain_counts AS SELECT * FROM ${physicalTable(brainsProjection, 'brain_counts')}`,
    );
  }
  expect(await totals()).toEqual(expected);
});
