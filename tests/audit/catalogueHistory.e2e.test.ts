import { Client as PgClient } from 'pg';
import type { ApiResponse, Client } from '#tests/support/httpClient';
import { newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { CURATOR, startCuratedService } from '#tests/support/curatedService';
import { brainForm, fresh, nifti } from '#tests/e2e/brains/brainFixtures';

/**
 * History of categories, species and atlases (decisions.md "Audit"): who may read it, the entry
 * (the event log's entry without data, plus changes of the detail route's representation), the
 * list rule, and the key resolved as on the detail route.
 */

let service: TestService;
let api: Client;
let staff: string;
let staffId: number;
let creator: { id: number; token: string; username: string };
let stranger: { id: number; token: string };
let db: PgClient;

interface Created {
  readonly res: ApiResponse;
  readonly body: Record<string, unknown> & { id: number };
}

let category: Created;
let species: Created;
let atlas: Created;
let staffAtlas: Created;
let categoryPath: string;
let speciesPath: string;
let atlasPath: string;

function created(res: ApiResponse, what: string): Created {
  if (res.status !== 201) throw new Error(`${what}: ${res.status} ${res.text}`);
  return { res, body: res.body as Created['body'] };
}

beforeAll(async () => {
  ({ service, api, staff } = await startCuratedService());
  staffId = (await api.get('/api/auth/me/', { token: staff })).body.id as number;
  const [c, s] = await Promise.all([newUser(api), newUser(api)]);
  creator = { ...c, username: (await api.get('/api/auth/me/', { token: c.token })).body.username as string };
  stranger = s;
  db = new PgClient({ connectionString: service.databaseUrl });
  await db.connect();

  category = created(
    await api.post('/api/categories/', {
      token: staff,
      json: { name: fresh('Rodents'), description: 'gnawing', image_url: 'https://example.org/r.png' },
    }),
    'category',
  );
  species = created(
    await api.post('/api/species/', {
      token: staff,
      json: {
        name: fresh('mouse'),
        scientific_name: `${fresh('Mus')} musculus`,
        description: 'house mouse',
        category: category.body.id,
      },
    }),
    'species',
  );
  atlas = created(
    await api.post('/api/atlases/', {
      token: creator.token,
      json: { name: fresh('Allen '), species: species.body.id, version: '3', color: '#AABBCC' },
    }),
    'atlas',
  );
  staffAtlas = created(
    await api.post('/api/atlases/', {
      token: staff,
      json: { name: fresh('Staff '), species: species.body.id },
    }),
    'staff atlas',
  );
  // Members arriving later change the counts now, not the creates' entries.
  for (const name of ['one', 'two'])
    created(
      await api.post('/api/brains/', {
        token: creator.token,
        body: brainForm({ name, atlas: atlas.body.id }, nifti()),
      }),
      `brain ${name}`,
    );
  categoryPath = `/api/categories/${encodeURIComponent(category.body.name as string)}/history/`;
  speciesPath = `/api/species/${(species.body.scientific_name as string).replace(' ', '%20')}/history/`;
  atlasPath = `/api/atlases/${atlas.body.slug as string}/history/`;
});
afterAll(async () => {
  await db.end();
  await service.close();
});

/** The create's changes: every field of the representation it answered, null before. */
const createdChanges = (body: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(body).map(([field, value]) => [field, [null, value]]));

async function auditedPosition(type: string, resourceType: string, id: number): Promise<string> {
  const { rows } = await db.query<{ position: string }>(
    `SELECT commit_position || '.' || prepare_position AS position FROM audit_events
      WHERE event_type = $1 AND resource_type = $2 AND resource_id = $3`,
    [type, resourceType, String(id)],
  );
  expect(rows).toHaveLength(1);
  return rows[0]!.position;
}

describe('GET /api/{categories,species,atlases}/{key}/history/', () => {
  test.each([
    ['category', () => categoryPath, () => category, 'CategoryCreated'],
    ['species', () => speciesPath, () => species, 'SpeciesCreated'],
    ['atlas', () => atlasPath, () => atlas, 'AtlasCreated'],
  ] as const)(
    '%s: one entry for its create, every field null before, as the create answered',
    async (type, path, resource, eventType) => {
      const res = await api.get(path(), { token: staff });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-total-count')).toBe('1');
      const { body, res: create } = resource();
      const actor =
        type === 'atlas'
          ? { id: creator.id, username: creator.username }
          : { id: staffId, username: CURATOR.username };
      expect(res.body).toEqual([
        {
          position: await auditedPosition(eventType, type, body.id),
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          type: eventType,
          resource: { type, id: body.id },
          revision: 0,
          recorded_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
          actor,
          request_id: create.headers.get('x-request-id') ?? expect.any(String),
          changes: createdChanges(body),
        },
      ]);
    },
  );

  test('the counts were 0 at the create even though brains came later (a replay, not the read model)', async () => {
    const live = await api.get(`/api/species/${(species.body.scientific_name as string).replace(' ', '-')}/`);
    expect(live.body.brains_count).toBe(2);
    const [entry] = (await api.get(speciesPath, { token: staff })).body as [
      { changes: Record<string, unknown> },
    ];
    expect(entry.changes.brains_count).toEqual([null, 0]);
    expect(entry.changes.brains).toEqual([null, []]);
    expect(entry.changes.atlases).toEqual([null, []]);
    const [atlasEntry] = (await api.get(atlasPath, { token: staff })).body as [
      { changes: Record<string, unknown> },
    ];
    expect(atlasEntry.changes.brains_count).toEqual([null, 0]);
  });

  test('an entry agrees with the detail route as of its position', async () => {
    for (const [history, detail] of [
      [categoryPath, categoryPath.replace('history/', '')],
      [speciesPath, speciesPath.replace('history/', '')],
      [atlasPath, atlasPath.replace('history/', '')],
    ] as const) {
      const [entry] = (await api.get(history, { token: staff })).body as [
        { position: string; changes: Record<string, [unknown, unknown]> },
      ];
      const asOf = await api.get(`${detail}?as_of=${entry.position}`);
      expect(asOf.status).toBe(200);
      expect(asOf.headers.get('x-as-of-position')).toBe(entry.position);
      expect(asOf.body).toEqual(
        Object.fromEntries(Object.entries(entry.changes).map(([f, [, after]]) => [f, after])),
      );
    }
  });

  test('anonymous: 401 with WWW-Authenticate, on every history, even an unknown key', async () => {
    for (const path of [categoryPath, speciesPath, atlasPath, '/api/atlases/no-such-atlas/history/']) {
      const res = await api.get(path);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBeTruthy();
      expect(res.body).toEqual({ detail: expect.any(String) });
    }
  });

  test('a category or species history is staff only: 403 for everyone else, the creator of its atlas too', async () => {
    for (const token of [creator.token, stranger.token])
      for (const path of [categoryPath, speciesPath]) {
        const res = await api.get(path, { token });
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ detail: expect.any(String) });
      }
  });

  test("an atlas's history: its creator and staff read it, anyone else 403", async () => {
    expect((await api.get(atlasPath, { token: creator.token })).status).toBe(200);
    expect((await api.get(atlasPath, { token: staff })).status).toBe(200);
    expect((await api.get(atlasPath, { token: stranger.token })).status).toBe(403);
    const staffAtlasPath = `/api/atlases/${staffAtlas.body.slug as string}/history/`;
    expect((await api.get(staffAtlasPath, { token: creator.token })).status).toBe(403);
    expect((await api.get(staffAtlasPath, { token: staff })).status).toBe(200);
  });

  test('an unknown key is 404 for staff (and for an authenticated user on atlases)', async () => {
    for (const path of [
      '/api/categories/no-such-category/history/',
      '/api/species/no-such-species/history/',
      '/api/atlases/no-such-atlas/history/',
    ])
      expect((await api.get(path, { token: staff })).status).toBe(404);
    expect((await api.get('/api/atlases/no-such-atlas/history/', { token: stranger.token })).status).toBe(
      404,
    );
  });

  test('keys resolve as on the detail routes: any case, any word separator, without the slash', async () => {
    const expected = (await api.get(speciesPath, { token: staff })).body;
    const scientific = species.body.scientific_name as string;
    for (const key of [
      scientific.toUpperCase().replace(' ', '+'),
      scientific.replace(' ', '_'),
      scientific.replace(' ', '-'),
    ])
      expect((await api.get(`/api/species/${key}/history`, { token: staff })).body).toEqual(expected);
    const upper = `/api/categories/${encodeURIComponent((category.body.name as string).toUpperCase())}/history/`;
    expect((await api.get(upper, { token: staff })).body).toEqual(
      (await api.get(categoryPath, { token: staff })).body,
    );
    const upperSlug = `/api/atlases/${(atlas.body.slug as string).toUpperCase()}/history/`;
    expect((await api.get(upperSlug, { token: creator.token })).status).toBe(200);
  });

  test('page or page_size gives the envelope; beyond the last page 404; bad values 400', async () => {
    const all = (await api.get(categoryPath, { token: staff })).body as unknown[];
    const page = await api.get(`${categoryPath}?page=1&page_size=1`, { token: staff });
    expect(page.status).toBe(200);
    expect(page.body).toEqual({ count: 1, next: null, previous: null, results: all });
    expect((await api.get(`${speciesPath}?page_size=5`, { token: staff })).body).toMatchObject({ count: 1 });
    const beyond = await api.get(`${atlasPath}?page=2`, { token: staff });
    expect(beyond.status).toBe(404);
    expect(beyond.body).toEqual({ detail: 'Invalid page.' });
    for (const bad of ['page=0', 'page=x', 'page_size=0', 'page_size=-3']) {
      const res = await api.get(`${categoryPath}?${bad}`, { token: staff });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body as object)).toEqual([bad.split('=')[0]]);
    }
  });
});
