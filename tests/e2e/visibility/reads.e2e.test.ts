import { setTimeout as sleep } from 'node:timers/promises';
import { type Client, newUser } from '#tests/support/httpClient';
import type { CuratedService } from '#tests/support/curatedService';
import { type TwoInstances, getTwice, resultIds, startTwoInstances } from './twoInstances';
import { waitFor } from '#tests/support/waitFor';
import { type Taxonomy, brainForm, createTaxonomy, niftiBytes, nifti } from '#tests/e2e/brains/brainFixtures';
import { finishProcessing } from '#tests/e2e/uploads/uploadFixtures';
import { encodePng } from '#tests/media/imageEncoders';

/*
 * Issue 19 on the read routes other than search (decisions.md "Visibility and collaborators"):
 * whoever may not see a brain gets what they would get if it did not exist: 404 on every route of
 * it, absent from every list, count, X-Total-Count, species, atlas and category count. Every
 * caller (the uploader, a collaborator, staff, a stranger, anonymous) on two instances of one
 * database, one keeping list answers (the default) and one keeping none (LIST_CACHE_MB=0); each
 * list is asked twice, the second answer a kept one where answers are kept. No processor: nothing
 * writes but the tests, so an embargo ending is seen with no write.
 */

type User = Awaited<ReturnType<typeof newUser>>;
interface Brain {
  readonly id: number;
  readonly readable_id: string;
}
type Name = 'priv' | 'emb' | 'pub';

let served: TwoInstances;
let a: CuratedService;
let instances: TwoInstances['instances'];
let api: Client;
let owner: User;
let viewer: User;
let stranger: User;
let place: Taxonomy;
const brains = {} as Record<Name, Brain>;
/** A private brain of the owner's, deleted: its past stays theirs. */
let gone: Brain;
/** A time when `gone` existed. */
let goneAlive: string;
let privUpload: string;
let embUpload: string;
const png = encodePng(2, 2);

interface Caller {
  readonly name: string;
  readonly token: () => string | undefined;
  /** The brains it may see, newest first (pub, emb, priv were created oldest last). */
  readonly sees: readonly Name[];
}

const CALLERS: readonly Caller[] = [
  { name: 'the uploader', token: () => owner.token, sees: ['pub', 'emb', 'priv'] },
  { name: 'a collaborator', token: () => viewer.token, sees: ['pub', 'priv'] },
  { name: 'staff', token: () => a.staff, sees: ['pub', 'emb', 'priv'] },
  { name: 'a stranger', token: () => stranger.token, sees: ['pub'] },
  { name: 'anonymous', token: () => undefined, sees: ['pub'] },
];
const NAMES: readonly Name[] = ['pub', 'emb', 'priv'];

const DAY_MS = 86_400_000;

async function create(token: string, fields: Record<string, string | number>): Promise<Brain> {
  const res = await a.api.post('/api/brains/', {
    token,
    body: brainForm({ atlas: place.atlas.id, ...fields }, nifti()),
  });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
  return res.body as Brain;
}

async function uploadOf(brain: Brain): Promise<string> {
  const res = await api.get(`/api/file-uploads/?associated_brain=${brain.id}`, { token: owner.token });
  expect(res.body).toHaveLength(1);
  return res.body[0].id as string;
}

beforeAll(async () => {
  served = await startTwoInstances();
  ({ a, instances } = served);
  api = a.api;
  [owner, viewer, stranger] = await Promise.all([newUser(api), newUser(api), newUser(api)]);
  place = await createTaxonomy(api, a.staff);
  brains.priv = await create(owner.token, { name: 'Private cortex', visibility: 'private' });
  const until = new Date(Date.now() + DAY_MS).toISOString();
  brains.emb = await create(owner.token, {
    name: 'Embargoed cortex',
    visibility: 'embargoed',
    embargo_until: until,
  });
  brains.pub = await create(owner.token, { name: 'Public cortex' });
  const shared = await api.post(`/api/brains/${brains.priv.id}/collaborators/`, {
    token: owner.token,
    json: { user: viewer.username, role: 'viewer' },
  });
  expect(shared.status).toBe(201);
  gone = await create(owner.token, { name: 'Gone cortex', visibility: 'private' });
  await sleep(20);
  goneAlive = new Date().toISOString();
  await sleep(20);
  expect((await api.delete(`/api/brains/${gone.id}/`, { token: owner.token })).status).toBe(204);
  privUpload = await uploadOf(brains.priv);
  embUpload = await uploadOf(brains.emb);
  for (const id of [privUpload, embUpload])
    await finishProcessing(a.service.databaseUrl, a.service.dataDir, id, {
      metadata: { format: 'nifti1' },
      preview: png,
    });
  await waitFor(
    'the previews to be in the read model',
    async () => (await api.get(`/api/brains/${brains.emb.id}/`, { token: owner.token })).body.preview_url,
    { timeoutMs: 20_000, intervalMs: 50, until: (url) => typeof url === 'string' },
  );
}, 120_000);

afterAll(async () => {
  await served?.close();
});

const ids = resultIds;
const idsOf = (names: readonly Name[]): number[] => names.map((name) => brains[name].id);

describe.each([0, 1])('instance %#', (instance) => {
  const on = () => instances[instance]!;

  test.each(CALLERS)(
    'the brains list, every filter, as $name: only what it may see, counted so',
    async (caller) => {
      const { api: api_ } = on();
      const filters = [
        `atlas=${place.atlas.slug}`,
        `atlas=${place.atlas.id}`,
        `species=${encodeURIComponent(place.species.scientific_name)}`,
        `category=${encodeURIComponent(place.category.name)}`,
        `category=${place.category.id}&verified=false`,
        `uploader=${owner.id}`,
        // The database holds this file's brains only: the whole catalogue too.
        '',
      ];
      for (const filter of filters) {
        const listed = await getTwice(api_, `/api/brains/?${filter}`, caller.token());
        expect(listed.status).toBe(200);
        expect(ids(listed)).toEqual(idsOf(caller.sees));
        expect(listed.headers.get('x-total-count')).toBe(String(caller.sees.length));
        // Page by page (one brain each): the count, every page and the page after the last.
        const walked: number[] = [];
        for (let page = 1; page <= caller.sees.length; page++) {
          const res = await getTwice(api_, `/api/brains/?${filter}&page=${page}&page_size=1`, caller.token());
          expect(res.status).toBe(200);
          expect(res.body.count).toBe(caller.sees.length);
          walked.push(...ids(res));
        }
        expect(walked).toEqual(idsOf(caller.sees));
        const past = await api_.get(`/api/brains/?${filter}&page=${caller.sees.length + 1}&page_size=1`, {
          token: caller.token(),
        });
        expect(past.status).toBe(404);
        // Oldest first and in shape B: the same brains.
        const oldest = await getTwice(
          api_,
          `/api/brains/?${filter}&ordering=date_uploaded&shape=b`,
          caller.token(),
        );
        expect(ids(oldest)).toEqual(idsOf(caller.sees).reverse());
      }
    },
  );

  test.each(CALLERS)(
    '`visibility` filters what $name may see, by what a brain reads as now',
    async (caller) => {
      const { api: api_ } = on();
      const kinds: Record<Name, string> = { pub: 'public', emb: 'embargoed', priv: 'private' };
      for (const visibility of ['public', 'private', 'embargoed']) {
        const wanted = caller.sees.filter((name) => kinds[name] === visibility);
        for (const filter of [`atlas=${place.atlas.slug}&`, `uploader=${owner.id}&`, '']) {
          const res = await getTwice(api_, `/api/brains/?${filter}visibility=${visibility}`, caller.token());
          expect(res.status).toBe(200);
          expect(ids(res)).toEqual(idsOf(wanted));
          expect(res.headers.get('x-total-count')).toBe(String(wanted.length));
          expect(res.body.every((brain: { visibility: string }) => brain.visibility === visibility)).toBe(
            true,
          );
        }
      }
      const wrong = await api_.get('/api/brains/?visibility=secret', { token: caller.token() });
      expect(wrong.status).toBe(400);
      expect(Object.keys(wrong.body)).toEqual(['visibility']);
    },
  );

  test.each(CALLERS)(
    'every route of a brain answers $name as if the brains it may not see did not exist',
    async (caller) => {
      const { api: api_ } = on();
      const token = caller.token();
      const bytes = niftiBytes();
      for (const name of NAMES) {
        const brain = brains[name];
        const sees = caller.sees.includes(name);
        const status = sees ? 200 : 404;
        const byId = await api_.get(`/api/brains/${brain.id}/`, { token });
        expect(byId.status).toBe(status);
        if (sees)
          expect(byId.body).toMatchObject({
            id: brain.id,
            visibility: { pub: 'public', emb: 'embargoed', priv: 'private' }[name],
          });
        else expect(byId.body).toEqual({ detail: expect.any(String) });
        expect((await api_.get(`/api/brains/${brain.readable_id}/`, { token })).status).toBe(status);
        expect(
          (await api_.get(`/api/brains/${brain.readable_id.toUpperCase()}/?shape=b`, { token })).status,
        ).toBe(status);
        expect(
          (await api_.get(`/api/brains/by_readable_id/?readable_id=${brain.readable_id}`, { token })).status,
        ).toBe(status);

        const file = await api_.get(`/api/brains/${brain.id}/file/`, { token });
        expect(file.status).toBe(status);
        if (sees) {
          expect(Buffer.from(file.text, 'latin1').length).toBe(bytes.length);
          expect(file.headers.get('cache-control')).toBe(
            name === 'pub' ? 'public, no-cache' : 'private, no-cache',
          );
          const etag = file.headers.get('etag')!;
          expect(
            (await api_.get(`/api/brains/${brain.id}/file/`, { token, headers: { 'If-None-Match': etag } }))
              .status,
          ).toBe(304);
        } else {
          // A 304 would confirm the file exists: the ETag of a file it may not see gets 404 too.
          const owners = await api_.get(`/api/brains/${brain.id}/file/`, { token: owner.token });
          const etag = owners.headers.get('etag')!;
          expect(
            (await api_.get(`/api/brains/${brain.id}/file/`, { token, headers: { 'If-None-Match': etag } }))
              .status,
          ).toBe(404);
        }
        const range = await api_.get(`/api/brains/${brain.id}/file/`, {
          token,
          headers: { Range: 'bytes=0-3' },
        });
        expect(range.status).toBe(sees ? 206 : 404);
        const head = await api_.request('HEAD', `/api/brains/${brain.id}/file/`, { token });
        expect(head.status).toBe(status);

        const preview = await api_.get(`/api/brains/${brain.id}/preview/`, { token });
        // pub has no preview: processed were priv's and emb's uploads only.
        expect(preview.status).toBe(sees && name !== 'pub' ? 200 : 404);
        if (sees && name !== 'pub') expect(preview.headers.get('cache-control')).toBe('private, no-cache');
      }
      // The atlas's oldest brain that the caller may see.
      const bySlug = await api_.get(`/api/brains/by_atlas_slug/?slug=${place.atlas.slug}`, { token });
      expect(bySlug.status).toBe(200);
      expect(bySlug.body.id).toBe(brains[caller.sees.at(-1)!].id);
    },
  );

  test.each(CALLERS)(
    'species, atlases and categories count and list only the brains $name may see',
    async (caller) => {
      const { api: api_ } = on();
      const token = caller.token();
      const count = caller.sees.length;
      const compact = idsOf(caller.sees).sort((x, y) => x - y);
      const species = await api_.get(`/api/species/${encodeURIComponent(place.species.scientific_name)}/`, {
        token,
      });
      expect(species.status).toBe(200);
      expect(species.body.brains_count).toBe(count);
      expect(species.body.brains.map((brain: { id: number }) => brain.id)).toEqual(compact);
      const speciesList = await api_.get(
        `/api/species/?scientific_name=${encodeURIComponent(place.species.scientific_name)}&ordering=-brains_count`,
        { token },
      );
      expect(speciesList.body).toEqual([species.body]);

      const atlas = await api_.get(`/api/atlases/${place.atlas.slug}/`, { token });
      expect(atlas.body.brains_count).toBe(count);
      const atlases = await api_.get(`/api/atlases/?species=${place.species.id}&ordering=brains_count`, {
        token,
      });
      expect(atlases.body).toEqual([atlas.body]);

      const category = await api_.get(`/api/categories/${encodeURIComponent(place.category.name)}/`, {
        token,
      });
      expect(category.body.brains_count).toBe(count);
      const categories = await api_.get(
        `/api/categories/?name=${encodeURIComponent(place.category.name)}&ordering=-brains_count`,
        { token },
      );
      expect(categories.body).toEqual([category.body]);

      // As of now, and as of when `gone` existed: by the rule of now (gone: as it was deleted, private).
      const now = new Date().toISOString();
      const speciesNow = await api_.get(
        `/api/species/${encodeURIComponent(place.species.scientific_name)}/?as_of=${now}`,
        { token },
      );
      expect(speciesNow.status).toBe(200);
      expect(speciesNow.body.brains_count).toBe(count);
      expect(speciesNow.body.brains.map((brain: { id: number }) => brain.id)).toEqual(compact);
      const withGone = caller.sees.includes('priv') && caller.name !== 'a collaborator';
      const speciesThen = await api_.get(
        `/api/species/${encodeURIComponent(place.species.scientific_name)}/?as_of=${goneAlive}`,
        { token },
      );
      expect(speciesThen.body.brains.map((brain: { id: number }) => brain.id)).toEqual(
        withGone ? [...compact, gone.id] : compact,
      );
      expect(speciesThen.body.brains_count).toBe(count + (withGone ? 1 : 0));
      const atlasThen = await api_.get(`/api/atlases/${place.atlas.slug}/?as_of=${goneAlive}`, { token });
      expect(atlasThen.body.brains_count).toBe(count + (withGone ? 1 : 0));
      const categoryThen = await api_.get(
        `/api/categories/${encodeURIComponent(place.category.name)}/?as_of=${goneAlive}`,
        { token },
      );
      expect(categoryThen.body.brains_count).toBe(count + (withGone ? 1 : 0));
    },
  );
});

describe('history and as_of of a brain', () => {
  test('a brain the caller may not see now is 404 (history, as_of), deleted ones by the state they were deleted in', async () => {
    const history = (brain: Brain, token?: string) => api.get(`/api/brains/${brain.id}/history/`, { token });
    expect((await history(brains.priv, owner.token)).status).toBe(200);
    expect((await history(brains.priv, a.staff)).status).toBe(200);
    expect((await history(brains.priv, viewer.token)).status).toBe(403); // sees it: not its uploader
    expect((await history(brains.priv, stranger.token)).status).toBe(404);
    expect((await history(brains.emb, viewer.token)).status).toBe(404);
    expect((await history(brains.pub, stranger.token)).status).toBe(403);
    expect((await history(brains.priv)).status).toBe(401);
    expect((await history(gone, owner.token)).status).toBe(200);
    expect((await history(gone, stranger.token)).status).toBe(404);

    const asOf = (brain: Brain, at: string, token?: string) =>
      api.get(`/api/brains/${brain.id}/?as_of=${encodeURIComponent(at)}`, { token });
    const now = new Date().toISOString();
    for (const caller of CALLERS)
      for (const name of NAMES) {
        const res = await asOf(brains[name], now, caller.token());
        expect([caller.name, name, res.status]).toEqual([
          caller.name,
          name,
          caller.sees.includes(name) ? 200 : 404,
        ]);
      }
    expect((await asOf(gone, goneAlive, owner.token)).status).toBe(200);
    expect((await asOf(gone, goneAlive, stranger.token)).status).toBe(404);
    expect((await asOf(gone, goneAlive)).status).toBe(404);
    expect((await api.get(`/api/brains/${gone.readable_id}/?as_of=${goneAlive}`)).status).toBe(404);
  });
});

describe("a brain's file uploads", () => {
  test('its collaborators read, download and preview them, list them by brain, read their history and as_of; others get 404', async () => {
    const routes = (id: string) => [
      `/api/file-uploads/${id}/`,
      `/api/file-uploads/${id}/download/`,
      `/api/file-uploads/${id}/preview/`,
      `/api/file-uploads/${id}/history/`,
      `/api/file-uploads/${id}/?as_of=${encodeURIComponent(new Date().toISOString())}`,
    ];
    for (const path of routes(privUpload)) {
      expect([path, (await api.get(path, { token: owner.token })).status]).toEqual([path, 200]);
      expect([path, (await api.get(path, { token: a.staff })).status]).toEqual([path, 200]);
      expect([path, (await api.get(path, { token: viewer.token })).status]).toEqual([path, 200]);
      expect([path, (await api.get(path, { token: stranger.token })).status]).toEqual([path, 404]);
      expect([path, (await api.get(path)).status]).toEqual([path, 401]);
    }
    // Not shared with the collaborator: as if it did not exist.
    for (const path of routes(embUpload))
      expect([path, (await api.get(path, { token: viewer.token })).status]).toEqual([path, 404]);

    const detail = await api.get(`/api/file-uploads/${privUpload}/`, { token: viewer.token });
    expect(detail.body).toMatchObject({ id: privUpload, associated_brain: { id: brains.priv.id } });
    const download = await api.get(`/api/file-uploads/${privUpload}/download/`, { token: viewer.token });
    expect(Buffer.from(download.text, 'latin1').length).toBe(niftiBytes().length);

    const byBrain = await api.get(`/api/file-uploads/?associated_brain=${brains.priv.id}`, {
      token: viewer.token,
    });
    expect(byBrain.body.map((upload: { id: string }) => upload.id)).toEqual([privUpload]);
    expect(byBrain.headers.get('x-total-count')).toBe('1');
    // "Your uploads" stay the caller's own; another brain's stay hidden.
    expect((await api.get('/api/file-uploads/', { token: viewer.token })).body).toEqual([]);
    const notShared = await api.get(`/api/file-uploads/?associated_brain=${brains.emb.id}`, {
      token: viewer.token,
    });
    expect(notShared.body).toEqual([]);
    const strangers = await api.get(`/api/file-uploads/?associated_brain=${brains.priv.id}&page=1`, {
      token: stranger.token,
    });
    expect(strangers.body).toMatchObject({ count: 0, results: [] });
  });
});

describe('kept answers', () => {
  test("one caller's kept list is never served to another: asked in turn, each gets its own", async () => {
    const path = `/api/brains/?atlas=${place.atlas.slug}&page=1&page_size=10`;
    for (let round = 0; round < 3; round++)
      for (const caller of CALLERS) {
        const res = await a.api.get(path, { token: caller.token() });
        expect([caller.name, res.body.count, ids(res)]).toEqual([
          caller.name,
          caller.sees.length,
          idsOf(caller.sees),
        ]);
      }
  });

  test('sharing, unsharing and making public change kept answers at once, on both instances', async () => {
    const here = await createTaxonomy(api, a.staff);
    const secret = await a.api.post('/api/brains/', {
      token: owner.token,
      body: brainForm({ name: 'Secret', atlas: here.atlas.id, visibility: 'private' }, nifti()),
    });
    expect(secret.status).toBe(201);
    const path = `/api/brains/?atlas=${here.atlas.slug}&page=1&page_size=5`;
    const species = `/api/species/${encodeURIComponent(here.species.scientific_name)}/`;
    const seen = async (expected: number[]) => {
      for (const { api: api_ } of instances)
        for (let i = 0; i < 2; i++) {
          const res = await api_.get(path, { token: stranger.token });
          expect([res.body.count, ids(res)]).toEqual([expected.length, expected]);
          expect((await api_.get(species, { token: stranger.token })).body.brains_count).toBe(
            expected.length,
          );
        }
    };
    await seen([]);
    const shared = await a.api.post(`/api/brains/${secret.body.id}/collaborators/`, {
      token: owner.token,
      json: { user: stranger.email, role: 'editor' },
    });
    expect(shared.status).toBe(201);
    await seen([secret.body.id]);
    const unshared = await a.api.delete(`/api/brains/${secret.body.id}/collaborators/${stranger.id}/`, {
      token: owner.token,
    });
    expect(unshared.status).toBe(204);
    await seen([]);
    const opened = await a.api.patch(`/api/brains/${secret.body.id}/`, {
      token: owner.token,
      json: { visibility: 'public' },
    });
    expect(opened.status).toBe(200);
    await seen([secret.body.id]);
    expect((await a.api.get(path)).body.count).toBe(1);
  });

  test('an embargo ends: a list, count and species kept before show the brain after, with no write', async () => {
    const here = await createTaxonomy(api, a.staff);
    const neighbour = await a.api.post('/api/brains/', {
      token: owner.token,
      body: brainForm({ name: 'Neighbour', atlas: here.atlas.id }, nifti()),
    });
    const until = Date.now() + 5_000;
    const ending = await a.api.post('/api/brains/', {
      token: owner.token,
      body: brainForm(
        {
          name: 'Ending',
          atlas: here.atlas.id,
          visibility: 'embargoed',
          embargo_until: new Date(until).toISOString(),
        },
        nifti(),
      ),
    });
    expect([neighbour.status, ending.status]).toEqual([201, 201]);
    const paths = [
      `/api/brains/?atlas=${here.atlas.slug}`,
      `/api/brains/?atlas=${here.atlas.slug}&page=1&page_size=1`,
      `/api/brains/?species=${encodeURIComponent(here.species.scientific_name)}&visibility=public`,
    ];
    const read = async (api_: Client) => Promise.all(paths.map((path) => api_.get(path)));
    for (const { api: api_ } of instances) {
      // Kept where answers are kept: asked twice before the end.
      for (let i = 0; i < 2; i++)
        for (const res of await read(api_)) {
          expect(ids(res)).toEqual([neighbour.body.id]);
          expect(res.headers.get('x-total-count')).toBe('1');
        }
      expect((await api_.get(`/api/brains/${ending.body.id}/file/`)).status).toBe(404);
      const species = await api_.get(`/api/species/${encodeURIComponent(here.species.scientific_name)}/`);
      expect(species.body.brains_count).toBe(1);
    }
    expect(Date.now()).toBeLessThan(until);
    await sleep(until - Date.now() + 200);
    for (const { api: api_ } of instances) {
      const [all, paged, publicOnly] = await read(api_);
      expect(ids(all!)).toEqual([ending.body.id, neighbour.body.id]);
      expect(all!.headers.get('x-total-count')).toBe('2');
      expect(paged!.body.count).toBe(2);
      expect(ids(publicOnly!)).toEqual([ending.body.id, neighbour.body.id]);
      const detail = await api_.get(`/api/brains/${ending.body.id}/`);
      expect(detail.body).toMatchObject({ visibility: 'public' });
      expect((await api_.get(`/api/brains/${ending.body.id}/file/`)).status).toBe(200);
      const species = await api_.get(`/api/species/${encodeURIComponent(here.species.scientific_name)}/`);
      expect(species.body.brains_count).toBe(2);
      const embargoed = await api_.get(`/api/brains/?atlas=${here.atlas.slug}&visibility=embargoed`, {
        token: owner.token,
      });
      expect(ids(embargoed)).toEqual([]);
    }
  });
});
