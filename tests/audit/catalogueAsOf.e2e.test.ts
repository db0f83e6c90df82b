import { Client as PgClient } from 'pg';
import type { ApiResponse, Client } from '#tests/support/httpClient';
import { newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startCuratedService } from '#tests/support/curatedService';
import { brainForm, fresh, nifti } from '#tests/e2e/brains/brainFixtures';

/**
 * `as_of` on the catalogue's detail routes (decisions.md "Audit"): the answer as of a write's
 * position is exactly what the live route answered right after that write, counts and compact
 * member lists included, while brains are created, renamed, moved to another species and deleted.
 */

let service: TestService;
let api: Client;
let staff: string;
let owner: { id: number; token: string };
let db: PgClient;

beforeAll(async () => {
  ({ service, api, staff } = await startCuratedService());
  owner = await newUser(api);
  db = new PgClient({ connectionString: service.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db.end();
  await service.close();
});

const positionOf = (res: ApiResponse): string => {
  const position = res.headers.get('x-event-position');
  if (!position) throw new Error(`no X-Event-Position: ${res.status} ${res.text}`);
  return position;
};

function created(res: ApiResponse, what: string): ApiResponse {
  if (res.status !== 201) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res;
}

/** The position of the (only) audited event of this type of this resource. */
async function eventPosition(type: string, resourceType: string, id: number): Promise<string> {
  const { rows } = await db.query<{ position: string }>(
    `SELECT commit_position || '.' || prepare_position AS position FROM audit_events
      WHERE event_type = $1 AND resource_type = $2 AND resource_id = $3`,
    [type, resourceType, String(id)],
  );
  if (rows.length !== 1) throw new Error(`${rows.length} ${type} events of ${resourceType} ${id}`);
  return rows[0]!.position;
}

const comparePositions = (a: string, b: string): number => {
  const [ac, ap] = a.split('.').map(BigInt) as [bigint, bigint];
  const [bc, bp] = b.split('.').map(BigInt) as [bigint, bigint];
  return ac !== bc ? (ac < bc ? -1 : 1) : ap === bp ? 0 : ap < bp ? -1 : 1;
};

interface World {
  category: { id: number; name: string };
  rodentsPath: string;
  mousePath: string;
  ratPath: string;
  zetaPath: string;
  alphaPath: string;
  ratAtlasPath: string;
  ratAtlasId: number;
  zetaId: number;
  alphaId: number;
}

/** What every watched detail route answered at one moment, and the position it was at. */
interface Snapshot {
  readonly label: string;
  readonly position: string;
  readonly time: string;
  readonly answers: Record<string, unknown>;
}

async function snapshot(label: string, position: string, paths: readonly string[]): Promise<Snapshot> {
  const answers: Record<string, unknown> = {};
  for (const path of paths) {
    const res = await api.get(path);
    answers[path] = res.status === 200 ? res.body : res.status;
  }
  const time = new Date().toISOString();
  // The next write is recorded after this time (millisecond precision).
  await new Promise((resolve) => setTimeout(resolve, 5));
  return { label, position, time, answers };
}

async function buildWorld(): Promise<{ world: World; before: string; last: string }> {
  const category = created(
    await api.post('/api/categories/', { token: staff, json: { name: fresh('Rodents'), description: 'r' } }),
    'category',
  );
  const speciesOf = async (scientific: string) =>
    created(
      await api.post('/api/species/', {
        token: staff,
        json: {
          name: fresh('sp'),
          scientific_name: scientific,
          description: 'd',
          category: category.body.id,
        },
      }),
      'species',
    );
  const mouse = await speciesOf(`${fresh('Mus')} musculus`);
  const rat = await speciesOf(`${fresh('Rattus')} norvegicus`);
  const atlasOf = async (species: number, name: string) =>
    created(await api.post('/api/atlases/', { token: owner.token, json: { name, species } }), 'atlas');
  // Created in the reverse of their name order: the compact list orders by name.
  const zeta = await atlasOf(mouse.body.id, fresh('Zeta '));
  const alpha = await atlasOf(mouse.body.id, fresh('alpha '));
  const ratAtlas = await atlasOf(rat.body.id, fresh('Rat '));
  const scientificPath = (name: string) => name.toLowerCase().replace(' ', '-');
  return {
    before: positionOf(mouse),
    last: positionOf(ratAtlas),
    world: {
      category: category.body,
      rodentsPath: `/api/categories/${encodeURIComponent(category.body.name)}/`,
      mousePath: `/api/species/${scientificPath(mouse.body.scientific_name)}/`,
      ratPath: `/api/species/${scientificPath(rat.body.scientific_name)}/`,
      zetaPath: `/api/atlases/${zeta.body.slug}/`,
      alphaPath: `/api/atlases/${alpha.body.slug}/`,
      ratAtlasPath: `/api/atlases/${ratAtlas.body.slug}/`,
      ratAtlasId: ratAtlas.body.id,
      zetaId: zeta.body.id,
      alphaId: alpha.body.id,
    },
  };
}

async function createBrain(atlas: number, name: string): Promise<ApiResponse> {
  return created(
    await api.post('/api/brains/', { token: owner.token, body: brainForm({ name, atlas }, nifti()) }),
    `brain ${name}`,
  );
}

let world: World;
let beforeMouse: string;
let taxonomyDone: string;
const snapshots: Snapshot[] = [];
let brains: { one: number; two: number; three: number };
let paths: string[];

beforeAll(async () => {
  ({ world, before: beforeMouse, last: taxonomyDone } = await buildWorld());
  paths = [
    world.rodentsPath,
    world.mousePath,
    world.ratPath,
    world.zetaPath,
    world.alphaPath,
    world.ratAtlasPath,
  ];
  snapshots.push(await snapshot('taxonomy', taxonomyDone, paths));

  const one = await createBrain(world.zetaId, 'one');
  const two = await createBrain(world.zetaId, 'two');
  snapshots.push(await snapshot('two brains', positionOf(two), paths));

  const three = await createBrain(world.alphaId, 'three');
  const renamed = await api.patch(`/api/brains/${two.body.id}/`, {
    token: owner.token,
    json: { name: 'two, renamed' },
  });
  expect(renamed.status).toBe(200);
  snapshots.push(await snapshot('renamed', positionOf(renamed), paths));
  expect(positionOf(three)).toBeTruthy();

  const moved = await api.patch(`/api/brains/${one.body.id}/`, {
    token: owner.token,
    json: { atlas: world.ratAtlasId },
  });
  expect(moved.status).toBe(200);
  snapshots.push(await snapshot('moved', positionOf(moved), paths));

  const deleted = await api.delete(`/api/brains/${three.body.id}/`, { token: owner.token });
  expect(deleted.status).toBe(204);
  snapshots.push(await snapshot('deleted', positionOf(deleted), paths));

  brains = { one: one.body.id, two: two.body.id, three: three.body.id };
});

describe('as_of on categories, species and atlases', () => {
  test('the live answers moved as the brains did (the scenario is what it claims)', () => {
    const mouse = (s: Snapshot) => s.answers[world.mousePath] as { brains_count: number; brains: unknown[] };
    expect(snapshots.map((s) => mouse(s).brains_count)).toEqual([0, 2, 3, 2, 1]);
    expect(snapshots.map((s) => (s.answers[world.ratPath] as { brains_count: number }).brains_count)).toEqual(
      [0, 0, 0, 1, 1],
    );
    expect(
      snapshots.map((s) => (s.answers[world.rodentsPath] as { brains_count: number }).brains_count),
    ).toEqual([0, 2, 3, 3, 2]);
    expect(mouse(snapshots[2]!).brains).toContainEqual(expect.objectContaining({ name: 'two, renamed' }));
    expect((snapshots[0]!.answers[world.mousePath] as { atlases: { slug: string }[] }).atlases).toHaveLength(
      2,
    );
  });

  test('as of each write position, every route answers exactly what it answered live then', async () => {
    for (const s of snapshots)
      for (const path of paths) {
        const res = await api.get(`${path}?as_of=${s.position}`);
        expect({ label: s.label, path, status: res.status, body: res.body }).toEqual({
          label: s.label,
          path,
          status: 200,
          body: s.answers[path],
        });
        const standsAt = res.headers.get('x-as-of-position');
        expect(standsAt).toMatch(/^\d+\.\d+$/);
        expect(comparePositions(standsAt!, s.position)).toBeLessThanOrEqual(0);
      }
  });

  test('as of a time between writes, the same answers', async () => {
    for (const s of snapshots)
      for (const path of [world.mousePath, world.rodentsPath, world.zetaPath]) {
        const res = await api.get(`${path}?as_of=${encodeURIComponent(s.time)}`);
        expect({ label: s.label, path, body: res.body }).toEqual({
          label: s.label,
          path,
          body: s.answers[path],
        });
      }
  });

  test('X-As-Of-Position names the newest event the answer was computed from', async () => {
    const moved = snapshots[3]!;
    const deleted = snapshots[4]!;
    const moveEvent = await eventPosition('BrainUpdated', 'brain', brains.one);
    const deleteEvent = await eventPosition('BrainDeleted', 'brain', brains.three);
    const at = async (path: string, s: Snapshot) =>
      (await api.get(`${path}?as_of=${s.position}`)).headers.get('x-as-of-position');
    // The brain moved out of the mouse species and into the rat's: both stand on the move.
    expect(await at(world.mousePath, moved)).toBe(moveEvent);
    expect(await at(world.ratPath, moved)).toBe(moveEvent);
    expect(await at(world.ratAtlasPath, moved)).toBe(moveEvent);
    expect(await at(world.mousePath, deleted)).toBe(deleteEvent);
    expect(await at(world.rodentsPath, deleted)).toBe(deleteEvent);
    // The rat atlas saw nothing of the delete: it still stands on the move.
    expect(await at(world.ratAtlasPath, deleted)).toBe(moveEvent);
    const alphaCreated = await eventPosition('AtlasCreated', 'atlas', world.alphaId);
    expect(await at(world.alphaPath, snapshots[0]!)).toBe(alphaCreated);
  });

  test('404 before the resource existed (position or time); the live route still answers', async () => {
    expect((await api.get(`${world.mousePath}?as_of=${beforeMouse}`)).status).toBe(200);
    const categoryCreated = await eventPosition('CategoryCreated', 'category', world.category.id);
    const before = await api.get(`${world.mousePath}?as_of=${categoryCreated}`);
    expect(before.status).toBe(404);
    expect(before.body).toEqual({ detail: 'Not found.' });
    expect((await api.get(`${world.zetaPath}?as_of=${categoryCreated}`)).status).toBe(404);
    expect((await api.get(`${world.rodentsPath}?as_of=${categoryCreated}`)).status).toBe(200);
    for (const path of paths) expect((await api.get(`${path}?as_of=2000-01-01T00:00:00Z`)).status).toBe(404);
    expect((await api.get(`${world.rodentsPath}?as_of=0.0`)).status).toBe(404);
  });

  test('a future time or position is the current state', async () => {
    const current = await api.get(world.mousePath);
    const future = await api.get(`${world.mousePath}?as_of=2999-01-01T00:00:00Z`);
    expect(future.status).toBe(200);
    expect(future.body).toEqual(current.body);
    const farPosition = await api.get(`${world.rodentsPath}?as_of=999999999999.999999999999`);
    expect(farPosition.body).toEqual((await api.get(world.rodentsPath)).body);
    // Beyond what PostgreSQL's bigint holds, and before its first year: still answers, not 500.
    const huge = await api.get(`${world.zetaPath}?as_of=99999999999999999999.99999999999999999999`);
    expect(huge.status).toBe(200);
    expect(huge.body).toEqual((await api.get(world.zetaPath)).body);
    expect((await api.get(`${world.zetaPath}?as_of=-99999999999999999999.1`)).status).toBe(404);
    expect((await api.get(`${world.zetaPath}?as_of=0000-01-01`)).status).toBe(404);
  });

  test('a bad as_of is 400 on as_of, checked before the key', async () => {
    for (const bad of ['yesterday', '', '2026-13-45T00:00:00Z', '1.2.3'])
      for (const path of [world.mousePath, world.rodentsPath, world.zetaPath, '/api/species/no-such/']) {
        const res = await api.get(`${path}?as_of=${encodeURIComponent(bad)}`);
        expect({ path, bad, status: res.status, fields: Object.keys(res.body as object) }).toEqual({
          path,
          bad,
          status: 400,
          fields: ['as_of'],
        });
      }
  });

  test('an unknown key is 404 with or without as_of; keys resolve as on the live route', async () => {
    expect((await api.get(`/api/atlases/no-such-atlas/?as_of=2999-01-01T00:00:00Z`)).status).toBe(404);
    expect((await api.get(`/api/categories/no-such-category/?as_of=2999-01-01T00:00:00Z`)).status).toBe(404);
    const upper = world.mousePath.toUpperCase().replace('/API/SPECIES/', '/api/species/').replace('-', '+');
    const res = await api.get(`${upper}?as_of=${snapshots[1]!.position}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(snapshots[1]!.answers[world.mousePath]);
  });
});
