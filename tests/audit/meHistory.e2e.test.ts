import { type Client, newUser } from '#tests/support/httpClient';
import { testServiceForFile } from '#tests/support/testService';

/**
 * The caller's account history (decisions.md "Audit"): the account's events and its tokens' (each
 * token its own resource), oldest first, with the changes to GET /api/auth/me/ or to the token by
 * replay; a password change that changes nothing shown; never a hash; only one's own; the envelope.
 */
const { api } = testServiceForFile();

interface Entry {
  position: string;
  type: string;
  resource: { type: string; id: number | string } | null;
  revision: number | null;
  actor: { id: number; username: string | null } | null;
  request_id: string | null;
  changes: Record<string, [unknown, unknown]>;
}

const history = async (client: Client, token: string): Promise<Entry[]> => {
  const res = await client.get('/api/auth/me/history/', { token });
  expect(res.status).toBe(200);
  return res.body as Entry[];
};

let user: Awaited<ReturnType<typeof newUser>>;
let other: Awaited<ReturnType<typeof newUser>>;
let pat: { id: string; name: string; created_at: string; token: string };
let token: string;

beforeAll(async () => {
  [user, other] = await Promise.all([newUser(api), newUser(api)]);
  const created = await api.post('/api/tokens/', { token: user.token, json: { name: 'ci runner' } });
  expect(created.status).toBe(201);
  pat = created.body;
  expect((await api.delete(`/api/tokens/${pat.id}/`, { token: user.token })).status).toBe(204);
  expect(
    (await api.patch('/api/profile/', { token: user.token, json: { bio: 'axons', first_name: 'Camillo' } }))
      .status,
  ).toBe(200);
  const changed = await api.post('/api/auth/password/change/', {
    token: user.token,
    json: { old_password: user.password, new_password: 'another-horse-battery' },
  });
  expect(changed.status).toBe(200);
  const login = await api.post('/api/auth/login/', {
    json: { email: user.email, password: 'another-horse-battery' },
  });
  expect(login.status).toBe(200);
  token = login.body.token as string;
});

describe('GET /api/auth/me/history/', () => {
  test('registration, logins, a token created and revoked, a profile change, a password change', async () => {
    const entries = await history(api, token);
    const me = (await api.get('/api/auth/me/', { token })).body as Record<string, unknown>;
    const types = entries.map((e) => `${e.type}:${e.resource?.type}`);
    expect(types[0]).toBe('UserRegistered:user');
    expect(types).toContain('AccessTokenIssued:token');
    expect(types).toContain('AccessTokenRevoked:token');
    expect(types).toContain('UserProfileUpdated:user');
    expect(types).toContain('UserPasswordChanged:user');
    expect(types.at(-1)).toBe('AccessTokenIssued:token'); // the login after the password change
    expect(types.filter((t) => t === 'AccessTokenIssued:token')).toHaveLength(3); // two logins, one personal token

    const [registered] = entries;
    expect(registered).toMatchObject({ resource: { type: 'user', id: user.id }, revision: 0 });
    expect(registered!.changes).toEqual({
      id: [null, user.id],
      username: [null, user.username],
      email: [null, user.email],
      first_name: [null, 'Santiago'],
      last_name: [null, user.last_name],
      avatar: [null, null],
      bio: [null, ''],
      location: [null, ''],
    });

    const patEntries = entries.filter((e) => e.resource?.id === pat.id);
    expect(patEntries.map((e) => e.type)).toEqual(['AccessTokenIssued', 'AccessTokenRevoked']);
    expect(patEntries[0]).toMatchObject({
      resource: { type: 'token', id: pat.id },
      actor: { id: user.id, username: user.username },
      changes: {
        id: [null, pat.id],
        name: [null, 'ci runner'],
        created_at: [null, pat.created_at],
        expires_at: [null, null],
        is_revoked: [null, false],
      },
    });
    expect(patEntries[1]!.changes).toEqual({ is_revoked: [false, true] });

    const [profile] = entries.filter((e) => e.type === 'UserProfileUpdated');
    expect(profile!.changes).toEqual({ first_name: ['Santiago', 'Camillo'], bio: ['', 'axons'] });
    const [password] = entries.filter((e) => e.type === 'UserPasswordChanged');
    expect(password!.changes).toEqual({});
    // The account entries, replayed, end where GET /api/auth/me/ is now.
    const replayed = Object.fromEntries(
      entries
        .filter((e) => e.resource?.type === 'user')
        .flatMap((e) => Object.entries(e.changes).map(([field, [, after]]) => [field, after])),
    );
    expect(replayed).toEqual(me);
  });

  test('never a password or token hash, nor the event payload', async () => {
    const res = await api.get('/api/auth/me/history/', { token });
    expect(res.text).not.toMatch(/hash|argon|scrypt|\$2[aby]\$|password_|secret/i);
    expect(res.text).not.toContain('another-horse-battery');
    for (const entry of res.body as Entry[]) expect(entry).not.toHaveProperty('data');
  });

  test("only one's own: another user's history has none of these events", async () => {
    const mine = new Set((await history(api, token)).map((e) => e.position));
    const theirs = await history(api, other.token);
    expect(theirs[0]).toMatchObject({ type: 'UserRegistered', resource: { type: 'user', id: other.id } });
    expect(theirs.some((e) => mine.has(e.position))).toBe(false);
  });

  test('401 anonymous or with a revoked token', async () => {
    const anonymous = await api.get('/api/auth/me/history/');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBeTruthy();
    const revoked = await api.get('/api/auth/me/history/', { token: pat.token, scheme: 'Bearer' });
    expect(revoked.status).toBe(401);
  });

  test('page and page_size give the envelope', async () => {
    const all = await history(api, token);
    const res = await api.get('/api/auth/me/history/?page=2&page_size=3', { token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      count: all.length,
      next: all.length > 6 ? expect.stringContaining('page=3') : null,
      previous: expect.stringContaining('page=1'),
      results: all.slice(3, 6),
    });
  });
});
