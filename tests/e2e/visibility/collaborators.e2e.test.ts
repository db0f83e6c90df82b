import type { Client } from '#tests/support/httpClient';
import { newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startCuratedService } from '#tests/support/curatedService';
import { type Taxonomy, brainForm, createTaxonomy, nifti } from '#tests/e2e/brains/brainFixtures';

/** Collaborators (decisions.md "Visibility and collaborators"): who adds, changes, removes and lists them. */
let service: TestService;
let api: Client;
let staff: string;
type User = Awaited<ReturnType<typeof newUser>>;
let owner: User;
let alice: User;
let bob: User;
let stranger: User;
let place: Taxonomy;

beforeAll(async () => {
  ({ service, api, staff } = await startCuratedService());
  [owner, alice, bob, stranger] = await Promise.all([newUser(api), newUser(api), newUser(api), newUser(api)]);
  place = await createTaxonomy(api, staff);
});
afterAll(() => service.close());

interface Brain {
  id: number;
  readable_id: string;
}

async function createBrain(visibility = 'private'): Promise<Brain> {
  const res = await api.post('/api/brains/', {
    token: owner.token,
    body: brainForm({ name: 'Shared scan', atlas: place.atlas.id, visibility }, nifti()),
  });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
  return res.body as Brain;
}

const add = (brain: Brain | string, user: string, role: string, token: string | undefined = owner.token) =>
  api.post(`/api/brains/${typeof brain === 'string' ? brain : brain.id}/collaborators/`, {
    token,
    json: { user, role },
  });

const list = (brain: Brain, token?: string) => api.get(`/api/brains/${brain.id}/collaborators/`, { token });

describe('POST /api/brains/{key}/collaborators/', () => {
  test('adds by username (201), changes the role (200), the same role again changes nothing (200)', async () => {
    const brain = await createBrain();
    const added = await add(brain, alice.username, 'viewer');
    expect(added.status).toBe(201);
    expect(added.body).toEqual({
      user: { id: alice.id, username: alice.username },
      role: 'viewer',
      added_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(added.headers.get('x-event-position')).toBeTruthy();
    const changed = await add(brain, alice.username.toUpperCase(), 'editor');
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual({ ...added.body, role: 'editor' });
    const again = await add(brain, alice.username, 'editor');
    expect(again.status).toBe(200);
    expect(again.body).toEqual(changed.body);
    expect(again.headers.get('x-event-position')).toBeNull();
    expect((await list(brain, owner.token)).body).toEqual([changed.body]);
  });

  test('adds by email, case-insensitively; by readable_id; staff may share any brain', async () => {
    const brain = await createBrain();
    const byEmail = await add(brain.readable_id, alice.email.toUpperCase(), 'viewer');
    expect(byEmail.status).toBe(201);
    expect(byEmail.body.user).toEqual({ id: alice.id, username: alice.username });
    const byStaff = await add(brain, bob.email, 'editor', staff);
    expect(byStaff.status).toBe(201);
    expect((await list(brain, owner.token)).body.map((c: { user: { id: number } }) => c.user.id)).toEqual([
      alice.id,
      bob.id,
    ]);
  });

  test('validation: unknown user, the uploader, bad or missing role, missing user: 400 on the field', async () => {
    const brain = await createBrain();
    const unknown = await add(brain, 'nobody-by-that-name', 'viewer');
    expect(unknown.status).toBe(400);
    expect(Object.keys(unknown.body as object)).toEqual(['user']);
    const unknownEmail = await add(brain, 'nobody@example.org', 'viewer');
    expect(Object.keys(unknownEmail.body as object)).toEqual(['user']);
    const self = await add(brain, owner.username, 'viewer');
    expect(self.status).toBe(400);
    expect(Object.keys(self.body as object)).toEqual(['user']);
    const badRole = await add(brain, alice.username, 'owner');
    expect(badRole.status).toBe(400);
    expect(badRole.body).toEqual({ role: ['"owner" is not a valid choice.'] });
    const none = await api.post(`/api/brains/${brain.id}/collaborators/`, { token: owner.token, json: {} });
    expect(none.status).toBe(400);
    expect(Object.keys(none.body as object).sort()).toEqual(['role', 'user']);
    expect((await list(brain, owner.token)).body).toEqual([]);
  });

  test('who may share: uploader and staff; collaborators 403; strangers 404 (private) or 403 (public)', async () => {
    const brain = await createBrain();
    expect((await add(brain, alice.username, 'viewer')).status).toBe(201);
    expect((await add(brain, bob.username, 'editor')).status).toBe(201);
    expect((await add(brain, stranger.username, 'viewer', alice.token)).status).toBe(403);
    expect((await add(brain, stranger.username, 'viewer', bob.token)).status).toBe(403);
    expect((await add(brain, stranger.username, 'viewer', stranger.token)).status).toBe(404);
    const anonymous = await api.post(`/api/brains/${brain.id}/collaborators/`, {
      json: { user: stranger.username, role: 'viewer' },
    });
    expect(anonymous.status).toBe(401);
    expect((await add('99999999', stranger.username, 'viewer')).status).toBe(404);
    expect((await add(`nope-${brain.id}`, stranger.username, 'viewer')).status).toBe(404);
    const open = await createBrain('public');
    expect((await add(open, alice.username, 'viewer', stranger.token)).status).toBe(403);
    expect((await list(brain, owner.token)).body).toHaveLength(2);
  });
});

describe('what a collaborator may then do', () => {
  test('a viewer reads; an editor also changes; removed, neither sees the brain any more', async () => {
    const brain = await createBrain();
    expect((await api.get(`/api/brains/${brain.id}/`, { token: alice.token })).status).toBe(404);
    await add(brain, alice.username, 'viewer');
    await add(brain, bob.username, 'editor');
    expect((await api.get(`/api/brains/${brain.id}/`, { token: alice.token })).status).toBe(200);
    expect(
      (await api.patch(`/api/brains/${brain.id}/`, { token: alice.token, json: { name: 'A' } })).status,
    ).toBe(403);
    expect(
      (await api.patch(`/api/brains/${brain.id}/`, { token: bob.token, json: { name: 'B' } })).status,
    ).toBe(200);
    // The editor may not share, nor remove, nor delete.
    expect(
      (await api.delete(`/api/brains/${brain.id}/collaborators/${alice.id}/`, { token: bob.token })).status,
    ).toBe(403);
    expect((await api.delete(`/api/brains/${brain.id}/`, { token: bob.token })).status).toBe(403);
    // Promoted, the viewer may change it.
    await add(brain, alice.username, 'editor');
    expect(
      (await api.patch(`/api/brains/${brain.id}/`, { token: alice.token, json: { name: 'A' } })).status,
    ).toBe(200);
    expect(
      (await api.delete(`/api/brains/${brain.id}/collaborators/${alice.id}/`, { token: owner.token })).status,
    ).toBe(204);
    expect(
      (await api.delete(`/api/brains/${brain.id}/collaborators/${bob.id}`, { token: staff })).status,
    ).toBe(204);
    for (const user of [alice, bob]) {
      expect((await api.get(`/api/brains/${brain.id}/`, { token: user.token })).status).toBe(404);
      expect((await list(brain, user.token)).status).toBe(404);
      expect(
        (await api.patch(`/api/brains/${brain.id}/`, { token: user.token, json: { name: 'x' } })).status,
      ).toBe(404);
    }
  });
});

describe('DELETE /api/brains/{key}/collaborators/{user_id}/', () => {
  test('204, then 404; not a collaborator or not a user id: 404; strangers 404, collaborators 403', async () => {
    const brain = await createBrain();
    await add(brain, alice.username, 'viewer');
    const path = (id: number | string) => `/api/brains/${brain.id}/collaborators/${id}/`;
    expect((await api.delete(path(alice.id), { token: stranger.token })).status).toBe(404);
    expect((await api.delete(path(alice.id), { token: alice.token })).status).toBe(403);
    expect((await api.delete(path(alice.id))).status).toBe(401);
    expect((await api.delete(path(bob.id), { token: owner.token })).status).toBe(404);
    expect((await api.delete(path('abc'), { token: owner.token })).status).toBe(404);
    expect((await api.delete(path(alice.id), { token: owner.token })).status).toBe(204);
    expect((await api.delete(path(alice.id), { token: owner.token })).status).toBe(404);
    expect((await list(brain, owner.token)).body).toEqual([]);
  });
});

describe('GET /api/brains/{key}/collaborators/', () => {
  test('whoever sees the brain; 404 for the others; the list rule (array, or the envelope)', async () => {
    const brain = await createBrain();
    const first = (await add(brain, alice.username, 'viewer')).body;
    const second = (await add(brain, bob.username, 'editor')).body;
    for (const token of [owner.token, staff, alice.token, bob.token]) {
      const res = await api.get(`/api/brains/${brain.readable_id}/collaborators/`, { token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual([first, second]);
    }
    expect((await list(brain, stranger.token)).status).toBe(404);
    expect((await list(brain)).status).toBe(404);
    expect((await api.get('/api/brains/99999999/collaborators/')).status).toBe(404);
    const page = await api.get(`/api/brains/${brain.id}/collaborators/?page_size=1`, { token: alice.token });
    expect(page.body).toMatchObject({ count: 2, previous: null, results: [first] });
    expect(page.body.next).toMatch(/page=2/);
    const open = await createBrain('public');
    await add(open, alice.username, 'editor');
    const anonymous = await list(open);
    expect(anonymous.status).toBe(200);
    expect(anonymous.body).toEqual([
      expect.objectContaining({ user: { id: alice.id, username: alice.username } }),
    ]);
  });

  test('a deleted brain has no collaborators route', async () => {
    const brain = await createBrain();
    await add(brain, alice.username, 'viewer');
    expect((await api.delete(`/api/brains/${brain.id}/`, { token: owner.token })).status).toBe(204);
    expect((await list(brain, owner.token)).status).toBe(404);
    expect((await add(brain, bob.username, 'viewer')).status).toBe(404);
  });
});
