import pg from 'pg';
import type { RecordedEvent } from '#shared/eventStore/eventStore';
import { inTransaction } from '#shared/infra/postgres/inTransaction';
import { contextFor } from '#shared/projections/projection';
import { installProjection } from '#shared/projections/projectionInstaller';
import { migrateCheckpoints } from '#shared/projections/checkpointStore';
import {
  createPostgresSearchIndex,
  createPostgresSearchReader,
} from '#shared/search/postgres/postgresSearchIndex';
import type { SearchIndex, SearchQuery, SearchReader } from '#shared/search/searchIndex';
import { createSearchProjection } from '#services/projector/projections/searchProjection';
import { createTestDatabase } from '#tests/support/testPostgres';
import type { Viewer } from '#shared/domain/brains/visibility';

/**
 * The search projection on its own: denormalised documents, updates that move a brain, deletes,
 * and the mirror (what Elasticsearch gets with SEARCH_BACKEND=elasticsearch) — here a standalone
 * PostgreSQL SearchIndex, which shares the adapters' contract — fed in the batch's transaction and
 * unchanged by the replays a crash causes.
 */
let pool: pg.Pool;
let mirror: SearchIndex;
let reader: SearchReader;
const projection = createSearchProjection({
  mirror: { upsert: (e) => mirror.upsert(e), remove: (e) => mirror.remove(e) },
});

let position = 0n;
function event(type: string, data: Record<string, unknown>): RecordedEvent {
  position += 1n;
  return {
    id: `e${position}`,
    type,
    data,
    metadata: {
      actor: '1',
      requestId: null,
      correlationId: 'c',
      causationId: null,
      schemaVersion: 1,
      recordedAt: '',
    },
    streamName: 's',
    streamRevision: 0n,
    position: { commit: position, prepare: position },
  };
}

const brainFields = {
  description: '',
  isReference: false,
  extraLink: '',
  website: '',
  color: '',
  verified: false,
  uuid: '00000000-0000-4000-8000-000000000000',
  uploaderId: 7,
  fileUploadId: null,
};

const taxonomy = [
  event('CategoryCreated', { categoryId: 1, name: 'rodents' }),
  event('CategoryCreated', { categoryId: 2, name: 'primates' }),
  event('SpeciesCreated', {
    speciesId: 10,
    name: 'house mouse',
    scientificName: 'Mus musculus',
    categoryId: 1,
  }),
  event('SpeciesCreated', {
    speciesId: 20,
    name: 'rhesus macaque',
    scientificName: 'Macaca mulatta',
    categoryId: 2,
  }),
  event('AtlasCreated', { atlasId: 100, name: 'Allen CCFv3', speciesId: 10 }),
  event('AtlasCreated', { atlasId: 200, name: 'NMT macaque template', speciesId: 20 }),
];
const brainEvents = [
  event('BrainCreated', {
    ...brainFields,
    brainId: 1,
    readableId: 'cortex-1',
    name: 'Cortex',
    atlasId: 100,
    speciesId: 10,
    categoryId: 1,
    createdAt: '2026-01-01T00:00:00Z',
  }),
  event('BrainCreated', {
    ...brainFields,
    brainId: 2,
    readableId: 'pons-2',
    name: 'Pons',
    atlasId: null,
    speciesId: null,
    categoryId: 2,
    createdAt: '2026-01-02T00:00:00Z',
  }),
  event('BrainCreated', {
    ...brainFields,
    brainId: 3,
    readableId: 'retina-3',
    name: 'Retina',
    atlasId: 100,
    speciesId: 10,
    categoryId: 1,
    createdAt: '2026-01-03T00:00:00Z',
  }),
  // Moved to the macaque atlas: species, atlas and category names follow.
  event('BrainUpdated', {
    brainId: 1,
    changes: { atlasId: 200, speciesId: 20, categoryId: 2, verified: true },
  }),
  event('BrainUpdated', { brainId: 2, changes: { name: 'Pons varolii', description: 'nissl stain' } }),
  event('BrainDeleted', { brainId: 3, fileUploadIds: [] }),
];
const all = [...taxonomy, ...brainEvents];

const apply = (events: readonly RecordedEvent[]) =>
  inTransaction(pool, (client) => projection.apply(contextFor(projection, client), events));

const QUERIES: SearchQuery[] = [
  { limit: 10, offset: 0, facets: ['species', 'atlas', 'category', 'verified'] },
  { text: 'macaca', limit: 10, offset: 0 },
  { text: 'mouse', limit: 10, offset: 0 },
  { text: 'nissl', limit: 10, offset: 0 },
  { text: 'primates', limit: 10, offset: 0, facets: ['atlas'] },
  { text: 'retina', limit: 10, offset: 0 },
];

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await createTestDatabase('searchprojection'), max: 4 });
  await migrateCheckpoints(pool);
  await installProjection(pool, projection);
  mirror = createPostgresSearchIndex({ pool, name: 'mirror_index' });
  await mirror.install();
  reader = createPostgresSearchReader({ pool });
});
afterAll(() => pool.end());

test('a batch rolled back after feeding the mirror, then replayed, leaves both indexes equal', async () => {
  await expect(
    inTransaction(pool, async (client) => {
      await projection.apply(contextFor(projection, client), all);
      throw new Error('crash before commit');
    }),
  ).rejects.toThrow('crash before commit');
  expect((await reader.query({ limit: 10, offset: 0 })).total).toBe(0);
  expect((await mirror.query({ limit: 10, offset: 0 })).total).toBe(2);

  await apply(taxonomy);
  await apply(brainEvents.slice(0, 4));
  await apply(brainEvents.slice(4));
  // A replay of older events reaches the mirror only (as after a crash between its write and the commit).
  await expect(
    inTransaction(pool, async (client) => {
      await projection.apply(contextFor(projection, client), brainEvents.slice(0, 3));
      throw new Error('crash again');
    }),
  ).rejects.toThrow();

  for (const query of QUERIES) expect(await mirror.query(query)).toEqual(await reader.query(query));
});

test('documents carry the names of their species, atlas and category, and follow updates and deletes', async () => {
  expect(await reader.query(QUERIES[0]!)).toEqual({
    total: 2,
    ids: [2, 1],
    facets: {
      species: [{ value: 20, count: 1 }],
      atlas: [{ value: 200, count: 1 }],
      category: [{ value: 2, count: 2 }],
      verified: [
        { value: false, count: 1 },
        { value: true, count: 1 },
      ],
    },
  });
  expect((await reader.query({ text: 'macaca', limit: 10, offset: 0 })).ids).toEqual([1]);
  expect((await reader.query({ text: 'nmt', limit: 10, offset: 0 })).ids).toEqual([1]);
  expect((await reader.query({ text: 'mouse', limit: 10, offset: 0 })).ids).toEqual([]);
  expect((await reader.query({ text: 'varolii', limit: 10, offset: 0 })).ids).toEqual([2]);
  expect((await reader.query({ text: 'retina', limit: 10, offset: 0 })).ids).toEqual([]);
  const { rows } = await pool.query<{ category_name: string; atlas_name: string | null }>(
    'SELECT category_name, atlas_name FROM brain_search WHERE NOT removed ORDER BY brain_id',
  );
  expect(rows).toEqual([
    { category_name: 'primates', atlas_name: 'NMT macaque template' },
    { category_name: 'primates', atlas_name: null },
  ]);
  // The deleted brain is a tombstone at its position (whoever follows the documents by position
  // sees it go): nothing of it is left but its id.
  const tombstones = await pool.query<{ removed: boolean; name: string | null }>(
    'SELECT removed, name FROM brain_search WHERE removed',
  );
  expect(tombstones.rows).toEqual([{ removed: true, name: null }]);
  // Atlas 100, species 10 and category 1 lost all their brains: no rows of zero are left behind,
  // so the counts are the same whatever batches built them.
  const counts = await pool.query(
    `SELECT species_id, atlas_id, category_id, verified, n::int
       FROM brain_search_counts ORDER BY species_id, atlas_id, category_id, verified`,
  );
  expect(counts.rows).toEqual([
    { species_id: 20, atlas_id: 200, category_id: 2, verified: true, n: 1 },
    { species_id: null, atlas_id: null, category_id: 2, verified: false, n: 1 },
  ]);
});

test('who finds a brain follows its visibility, its collaborators and a lifted embargo', async () => {
  const anonymous = { userId: null, isStaff: false };
  const collaborator = { userId: 8, isStaff: false };
  const uploader = { userId: 7, isStaff: false };
  const later = new Date(Date.now() + 3_600_000).toISOString();
  const found = async (viewer: Viewer, text = 'hidden') => {
    const answer = await reader.query({ text, limit: 10, offset: 0, filters: { viewer } });
    expect(await mirror.query({ text, limit: 10, offset: 0, filters: { viewer } })).toEqual(answer);
    return answer.ids;
  };
  const created = (brainId: number, name: string, extra: Record<string, unknown>) =>
    event('BrainCreated', {
      ...brainFields,
      brainId,
      readableId: `hidden-${brainId}`,
      name,
      atlasId: null,
      speciesId: 10,
      categoryId: 1,
      createdAt: '2026-02-01T00:00:00Z',
      ...extra,
    });
  expect(projection.eventTypes).toEqual(expect.objectContaining({ has: expect.any(Function) }));
  for (const type of [
    'BrainCollaboratorAdded',
    'BrainCollaboratorRoleChanged',
    'BrainCollaboratorRemoved',
    'EmbargoLifted',
  ])
    expect(projection.eventTypes !== 'all' && projection.eventTypes.has(type)).toBe(true);

  await apply([
    created(4, 'Hidden private', { visibility: 'private', embargoUntil: null }),
    created(5, 'Hidden embargoed', { visibility: 'embargoed', embargoUntil: later }),
  ]);
  expect(await found(anonymous)).toEqual([]);
  expect(await found(collaborator)).toEqual([]);
  expect(await found(uploader)).toEqual([5, 4]);

  await apply([
    event('BrainCollaboratorAdded', { brainId: 4, userId: 8, role: 'viewer', addedBy: 7, addedAt: '' }),
  ]);
  expect(await found(collaborator)).toEqual([4]);
  await apply([
    event('BrainCollaboratorRoleChanged', {
      brainId: 4,
      userId: 8,
      role: 'editor',
      previousRole: 'viewer',
      changedBy: 7,
      changedAt: '',
    }),
  ]);
  expect(await found(collaborator)).toEqual([4]);
  // The facets of a caller who may not see them: the species of the hidden brains is not counted.
  const facets = await reader.query({
    limit: 0,
    offset: 0,
    facets: ['species'],
    filters: { viewer: anonymous },
  });
  expect(facets.facets).toEqual({ species: [{ value: 20, count: 1 }] });

  await apply([event('BrainCollaboratorRemoved', { brainId: 4, userId: 8, removedBy: 7, removedAt: '' })]);
  expect(await found(collaborator)).toEqual([]);
  expect(await found(uploader)).toEqual([5, 4]);

  await apply([event('BrainUpdated', { brainId: 4, changes: { visibility: 'public', embargoUntil: null } })]);
  expect(await found(anonymous)).toEqual([4]);
  await apply([event('EmbargoLifted', { brainId: 5, embargoUntil: later, liftedAt: '' })]);
  expect(await found(anonymous)).toEqual([5, 4]);
  await apply([
    event('BrainUpdated', { brainId: 5, changes: { visibility: 'private', embargoUntil: null } }),
  ]);
  expect(await found(anonymous)).toEqual([4]);

  const { rows } = await pool.query(
    'SELECT brain_id, visibility, embargo_until, readers FROM brain_search WHERE brain_id IN (4, 5) ORDER BY 1',
  );
  expect(rows).toEqual([
    { brain_id: 4, visibility: 'public', embargo_until: null, readers: [7] },
    { brain_id: 5, visibility: 'private', embargo_until: null, readers: [7] },
  ]);
  // Kept counts hold the public documents only.
  const counts = await pool.query<{ n: string }>('SELECT sum(n) AS n FROM brain_search_counts');
  expect(Number(counts.rows[0]!.n)).toBe(3);
});
