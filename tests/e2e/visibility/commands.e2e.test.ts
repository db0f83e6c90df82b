import type { Client } from '#tests/support/httpClient';
import { newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startCuratedService } from '#tests/support/curatedService';
import { waitFor } from '#tests/support/waitFor';
import { type Taxonomy, brainForm, createTaxonomy, nifti } from '#tests/e2e/brains/brainFixtures';

/**
 * Visibility on the command side (decisions.md "Visibility and collaborators"): create and change
 * it, and who may write to a brain they see (owner, staff, editor) or do not see (404, as if it did
 * not exist).
 */
let service: TestService;
let api: Client;
let staff: string;
type User = Awaited<ReturnType<typeof newUser>>;
let owner: User;
let editor: User;
let viewer: User;
let stranger: User;
let place: Taxonomy;

beforeAll(async () => {
  ({ service, api, staff } = await startCuratedService());
  [owner, editor, viewer, stranger] = await Promise.all([
    newUser(api),
    newUser(api),
    newUser(api),
    newUser(api),
  ]);
  place = await createTaxonomy(api, staff);
});
afterAll(() => service.close());

interface Brain {
  id: number;
  readable_id: string;
  visibility: string;
  embargo_until: string | null;
}

async function createBrain(fields: Record<string, string> = {}, token = owner.token): Promise<Brain> {
  const res = await api.post('/api/brains/', {
    token,
    body: brainForm({ name: 'Scan', atlas: place.atlas.id, ...fields }, nifti()),
  });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
  return res.body as Brain;
}

async function share(brain: Brain, user: User, role: 'viewer' | 'editor'): Promise<void> {
  const res = await api.post(`/api/brains/${brain.id}/collaborators/`, {
    token: owner.token,
    json: { user: user.username, role },
  });
  if (res.status !== 201) throw new Error(`share: ${res.status} ${res.text}`);
}

/** A private brain with an editor and a viewer. */
async function sharedPrivateBrain(): Promise<Brain> {
  const brain = await createBrain({ visibility: 'private' });
  await share(brain, editor, 'editor');
  await share(brain, viewer, 'viewer');
  return brain;
}

const inAMinute = (): string => new Date(Date.now() + 60_000).toISOString();

describe('create', () => {
  test('public by default; private and embargoed as asked, in the 201 and in GET', async () => {
    const plain = await createBrain();
    expect(plain).toMatchObject({ visibility: 'public', embargo_until: null });
    const hidden = await createBrain({ visibility: 'private' });
    expect(hidden).toMatchObject({ visibility: 'private', embargo_until: null });
    const until = inAMinute();
    const held = await createBrain({ visibility: 'embargoed', embargo_until: until.replace('Z', '+00:00') });
    expect(held).toMatchObject({ visibility: 'embargoed', embargo_until: until });
    const got = await api.get(`/api/brains/${held.id}/`, { token: owner.token });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ visibility: 'embargoed', embargo_until: until });
    // Nobody else sees either of them.
    for (const brain of [hidden, held]) {
      expect((await api.get(`/api/brains/${brain.id}/`)).status).toBe(404);
      expect((await api.get(`/api/brains/${brain.id}/`, { token: stranger.token })).status).toBe(404);
    }
  });

  test('embargo_until is ignored unless embargoed', async () => {
    expect(await createBrain({ visibility: 'private', embargo_until: inAMinute() })).toMatchObject({
      visibility: 'private',
      embargo_until: null,
    });
    expect(await createBrain({ embargo_until: inAMinute() })).toMatchObject({
      visibility: 'public',
      embargo_until: null,
    });
  });

  test.each([
    [{ visibility: 'secret' }, 'visibility'],
    [{ visibility: '' }, 'visibility'],
    [{ visibility: 'embargoed' }, 'embargo_until'],
    [{ visibility: 'embargoed', embargo_until: 'next tuesday' }, 'embargo_until'],
    [{ visibility: 'embargoed', embargo_until: '2020-01-01T00:00:00Z' }, 'embargo_until'],
  ])('%j is 400 on %s, and no brain is made', async (fields, field) => {
    const before = (await api.get('/api/brains/', { token: staff })).headers.get('x-total-count');
    const res = await api.post('/api/brains/', {
      token: owner.token,
      body: brainForm({ name: 'Refused', atlas: place.atlas.id, ...fields }, nifti()),
    });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body as object)).toEqual([field]);
    expect(res.body[field]).toEqual([expect.any(String)]);
    expect((await api.get('/api/brains/', { token: staff })).headers.get('x-total-count')).toBe(before);
  });
});

describe('change visibility', () => {
  test('the uploader makes a brain private, embargoed and public again; each is a change', async () => {
    const brain = await createBrain();
    const hidden = await api.patch(`/api/brains/${brain.id}/`, {
      token: owner.token,
      json: { visibility: 'private' },
    });
    expect(hidden.status).toBe(200);
    expect(hidden.body).toMatchObject({ visibility: 'private', embargo_until: null });
    expect((await api.get(`/api/brains/${brain.id}/`)).status).toBe(404);
    const until = inAMinute();
    const held = await api.patch(`/api/brains/${brain.readable_id}/`, {
      token: owner.token,
      json: { visibility: 'embargoed', embargo_until: until },
    });
    expect(held.status).toBe(200);
    expect(held.body).toMatchObject({ visibility: 'embargoed', embargo_until: until });
    const open = await api.patch(`/api/brains/${brain.id}/`, {
      token: owner.token,
      json: { visibility: 'public' },
    });
    expect(open.body).toMatchObject({ visibility: 'public', embargo_until: null });
    expect((await api.get(`/api/brains/${brain.id}/`)).status).toBe(200);
  });

  test('staff change any brain they see (all of them)', async () => {
    const brain = await createBrain({ visibility: 'private' });
    const res = await api.patch(`/api/brains/${brain.id}/`, { token: staff, json: { visibility: 'public' } });
    expect(res.status).toBe(200);
    expect(res.body.visibility).toBe('public');
  });

  test('embargo_until alone moves an embargo; a past one or none is 400 on embargo_until', async () => {
    const brain = await createBrain({ visibility: 'embargoed', embargo_until: inAMinute() });
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const moved = await api.patch(`/api/brains/${brain.id}/`, {
      token: owner.token,
      json: { embargo_until: later },
    });
    expect(moved.body).toMatchObject({ visibility: 'embargoed', embargo_until: later });
    const past = await api.patch(`/api/brains/${brain.id}/`, {
      token: owner.token,
      json: { embargo_until: '2001-01-01T00:00:00Z' },
    });
    expect(past.status).toBe(400);
    expect(Object.keys(past.body as object)).toEqual(['embargo_until']);
    const plain = await createBrain();
    const none = await api.patch(`/api/brains/${plain.id}/`, {
      token: owner.token,
      json: { visibility: 'embargoed' },
    });
    expect(none.status).toBe(400);
    expect(Object.keys(none.body as object)).toEqual(['embargo_until']);
    const bad = await api.patch(`/api/brains/${plain.id}/`, {
      token: owner.token,
      json: { visibility: 'hidden' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ visibility: ['"hidden" is not a valid choice.'] });
    const badTime = await api.patch(`/api/brains/${plain.id}/`, {
      token: owner.token,
      json: { visibility: 'embargoed', embargo_until: 'soon' },
    });
    expect(badTime.status).toBe(400);
    expect(Object.keys(badTime.body as object)).toEqual(['embargo_until']);
    expect((await api.get(`/api/brains/${plain.id}/`)).body.visibility).toBe('public');
  });

  test('multipart PATCH and PUT take visibility too', async () => {
    const brain = await createBrain();
    const form = new FormData();
    form.append('visibility', 'private');
    const res = await api.patch(`/api/brains/${brain.id}/`, { token: owner.token, body: form });
    expect(res.status).toBe(200);
    expect(res.body.visibility).toBe('private');
  });
});

describe('PUT keeps what it is not given', () => {
  test('a PUT without visibility leaves a private brain private, and an embargo as it was', async () => {
    const hidden = await createBrain({ visibility: 'private' });
    const put = await api.put(`/api/brains/${hidden.id}/`, {
      token: owner.token,
      json: { name: 'Replaced', atlas: place.atlas.id },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ name: 'Replaced', visibility: 'private', embargo_until: null });
    expect((await api.get(`/api/brains/${hidden.id}/`)).status).toBe(404);
    const until = inAMinute();
    const held = await createBrain({ visibility: 'embargoed', embargo_until: until });
    const again = await api.put(`/api/brains/${held.id}/`, {
      token: owner.token,
      json: { name: 'Replaced', atlas: place.atlas.id },
    });
    expect(again.body).toMatchObject({ visibility: 'embargoed', embargo_until: until });
  });

  test('a GET body sent back by PUT changes nothing, also for an editor', async () => {
    for (const fields of [
      { visibility: 'private' },
      { visibility: 'embargoed', embargo_until: inAMinute() },
    ]) {
      const brain = await sharedPrivateBrain().then(async (b) => {
        const res = await api.patch(`/api/brains/${b.id}/`, { token: owner.token, json: fields });
        expect(res.status).toBe(200);
        return res.body as Brain;
      });
      const got = await api.get(`/api/brains/${brain.id}/`, { token: owner.token });
      expect(got.status).toBe(200);
      for (const token of [owner.token, editor.token]) {
        const put = await api.put(`/api/brains/${brain.id}/`, { token, json: got.body });
        expect(put.status).toBe(200);
        // No new event: the revision the ETags carry (a read's also names its body) is the same.
        const revision = (etag: string | null) => /^W\/"(\d+)[".]/.exec(etag ?? '')?.[1];
        expect(revision(put.headers.get('etag'))).toBe(revision(got.headers.get('etag')));
        expect(revision(put.headers.get('etag'))).toBeDefined();
        expect(put.body).toMatchObject({ visibility: brain.visibility, embargo_until: brain.embargo_until });
      }
    }
  });
});

describe('who may write', () => {
  const statuses = async (
    run: (token: string | undefined, brain: Brain) => Promise<number>,
    make: () => Promise<Brain> = sharedPrivateBrain,
  ): Promise<Record<string, number>> => {
    const who: Record<string, string | undefined> = {
      owner: owner.token,
      staff,
      editor: editor.token,
      viewer: viewer.token,
      stranger: stranger.token,
      anonymous: undefined,
    };
    const out: Record<string, number> = {};
    for (const [name, token] of Object.entries(who)) out[name] = await run(token, await make());
    return out;
  };

  test('PATCH of descriptive fields: owner, staff and editors; a viewer 403; a stranger 404', async () => {
    expect(
      await statuses(async (token, brain) => {
        const res = await api.patch(`/api/brains/${brain.id}/`, { token, json: { name: 'Changed' } });
        if (res.status === 200) expect(res.body.name).toBe('Changed');
        return res.status;
      }),
    ).toEqual({ owner: 200, staff: 200, editor: 200, viewer: 403, stranger: 404, anonymous: 401 });
  });

  test('PUT: the same, by readable_id too', async () => {
    expect(
      await statuses(
        async (token, brain) =>
          (
            await api.put(`/api/brains/${brain.readable_id}/`, {
              token,
              json: { name: 'New', atlas: place.atlas.id },
            })
          ).status,
      ),
    ).toEqual({ owner: 200, staff: 200, editor: 200, viewer: 403, stranger: 404, anonymous: 401 });
  });

  test('changing visibility: owner and staff only; an editor 403', async () => {
    expect(
      await statuses(
        async (token, brain) =>
          (await api.patch(`/api/brains/${brain.id}/`, { token, json: { visibility: 'public' } })).status,
      ),
    ).toEqual({ owner: 200, staff: 200, editor: 403, viewer: 403, stranger: 404, anonymous: 401 });
  });

  test('DELETE: owner and staff only; the brain stays for the others', async () => {
    const result = await statuses(async (token, brain) => {
      const status = (await api.delete(`/api/brains/${brain.id}/`, { token })).status;
      const still = (await api.get(`/api/brains/${brain.id}/`, { token: staff })).status;
      expect(still).toBe(status === 204 ? 404 : 200);
      return status;
    });
    expect(result).toEqual({
      owner: 204,
      staff: 204,
      editor: 403,
      viewer: 403,
      stranger: 404,
      anonymous: 401,
    });
  });

  test('a public brain: strangers get 403 (they see it), as before', async () => {
    const run = async (token: string | undefined, brain: Brain) =>
      (await api.patch(`/api/brains/${brain.id}/`, { token, json: { name: 'x' } })).status;
    expect(await statuses(run, () => createBrain())).toMatchObject({ stranger: 403, anonymous: 401 });
    const brain = await createBrain();
    expect((await api.delete(`/api/brains/${brain.id}/`, { token: stranger.token })).status).toBe(403);
  });

  test('a stale or right If-Match on a brain the caller does not see is 404, as for no brain at all', async () => {
    const brain = await sharedPrivateBrain();
    for (const etag of ['W/"0"', 'W/"2"', 'W/"9"']) {
      for (const path of [`/api/brains/${brain.id}/`, `/api/brains/99999999/`]) {
        const headers = { 'If-Match': etag };
        expect((await api.patch(path, { token: stranger.token, headers, json: { name: 'x' } })).status).toBe(
          404,
        );
        expect((await api.delete(path, { token: stranger.token, headers })).status).toBe(404);
      }
    }
    // The editor, who sees it, still gets 409 for a stale one.
    const stale = await api.patch(`/api/brains/${brain.id}/`, {
      token: editor.token,
      headers: { 'If-Match': 'W/"0"' },
      json: { name: 'x' },
    });
    expect(stale.status).toBe(409);
  });

  test('an ended embargo reads public: strangers then get 403, not 404', async () => {
    const brain = await createBrain({
      visibility: 'embargoed',
      embargo_until: new Date(Date.now() + 1500).toISOString(),
    });
    expect(
      (await api.patch(`/api/brains/${brain.id}/`, { token: stranger.token, json: { name: 'x' } })).status,
    ).toBe(404);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    expect(
      (await api.patch(`/api/brains/${brain.id}/`, { token: stranger.token, json: { name: 'x' } })).status,
    ).toBe(403);
    // And the uploader sending it back as public changes nothing.
    const got = await api.get(`/api/brains/${brain.id}/`, { token: owner.token });
    expect(got.body).toMatchObject({ visibility: 'public', embargo_until: brain.embargo_until });
  });
});

describe('history', () => {
  test("visibility changes, collaborators and the embargo's end (recorded by the processor's timer) are in it", async () => {
    const until = new Date(Date.now() + 2000).toISOString();
    const brain = await createBrain({ visibility: 'private' });
    await share(brain, viewer, 'viewer');
    await api.patch(`/api/brains/${brain.id}/`, {
      token: owner.token,
      json: { visibility: 'embargoed', embargo_until: until },
    });
    await api.delete(`/api/brains/${brain.id}/collaborators/${viewer.id}/`, { token: owner.token });
    interface Entry {
      type: string;
      actor: { id: number } | null;
      changes: Record<string, unknown>;
    }
    const history = async (): Promise<Entry[]> =>
      (await api.get(`/api/brains/${brain.id}/history/`, { token: owner.token })).body as Entry[];
    const entries = await waitFor('the EmbargoLifted entry', history, {
      until: (list) => list.some((e) => e.type === 'EmbargoLifted'),
    });
    const own = entries.filter((e) => e.type.startsWith('Brain') || e.type === 'EmbargoLifted');
    expect(own.map((e) => [e.type, e.changes])).toEqual([
      ['BrainCreated', expect.objectContaining({ visibility: [null, 'private'], collaborators: [null, []] })],
      ['BrainCollaboratorAdded', { collaborators: [[], [{ user: viewer.id, role: 'viewer' }]] }],
      ['BrainUpdated', { visibility: ['private', 'embargoed'], embargo_until: [null, until] }],
      ['BrainCollaboratorRemoved', { collaborators: [[{ user: viewer.id, role: 'viewer' }], []] }],
      ['EmbargoLifted', { visibility: ['embargoed', 'public'] }],
    ]);
    expect(own.at(-1)!.actor).toBeNull();
    expect((await api.get(`/api/brains/${brain.id}/`)).status).toBe(200);
  });
});
