import { newUser } from '#tests/support/httpClient';
import { testServiceForFile } from '#tests/support/testService';

const { api } = testServiceForFile();

const registration = (n: string) => ({
  email: `${n}@example.org`,
  username: n,
  password: 'long-enough-password',
  password_confirm: 'long-enough-password',
  first_name: 'Camillo',
  last_name: 'Golgi',
});

describe('POST /api/auth/register/', () => {
  test('creates the user and answers 201 with its public fields', async () => {
    const res = await api.post('/api/auth/register/', { json: registration('golgi') });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      username: 'golgi',
      email: 'golgi@example.org',
      first_name: 'Camillo',
      last_name: 'Golgi',
      avatar: null,
    });
    expect(res.body.id).toBeGreaterThan(0);
    expect(res.body).not.toHaveProperty('password');
  });

  test('works without the trailing slash and ignores unknown fields', async () => {
    const res = await api.post('/api/auth/register', {
      json: { ...registration('noslash'), favourite_lobe: 'occipital' },
    });
    expect(res.status).toBe(201);
    expect(res.body).not.toHaveProperty('favourite_lobe');
  });

  test('rejects missing fields, short passwords, bad emails and mismatched confirmation', async () => {
    const missing = await api.post('/api/auth/register/', { json: { email: 'x@example.org' } });
    expect(missing.status).toBe(400);
    for (const field of ['username', 'password', 'password_confirm', 'first_name', 'last_name']) {
      expect(missing.body[field]).toEqual([expect.any(String)]);
    }
    const short = await api.post('/api/auth/register/', {
      json: { ...registration('shorty'), password: 'short', password_confirm: 'short' },
    });
    expect(short.status).toBe(400);
    expect(short.body.password[0]).toMatch(/at least 8 characters/);
    const email = await api.post('/api/auth/register/', {
      json: { ...registration('bademail'), email: 'not-an-email' },
    });
    expect(email.status).toBe(400);
    expect(Object.keys(email.body)).toEqual(['email']);
    const mismatch = await api.post('/api/auth/register/', {
      json: { ...registration('mismatch'), password_confirm: 'something-else' },
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body).toEqual({ non_field_errors: ['Passwords do not match.'] });
  });

  test('email (case-insensitively) and username are unique', async () => {
    await api.post('/api/auth/register/', { json: registration('unique1') });
    const sameEmail = await api.post('/api/auth/register/', {
      json: { ...registration('unique2'), email: 'UNIQUE1@Example.org' },
    });
    expect(sameEmail.status).toBe(400);
    expect(sameEmail.body).toEqual({ email: ['user with this email already exists.'] });
    const sameUsername = await api.post('/api/auth/register/', {
      json: { ...registration('unique3'), username: 'unique1' },
    });
    expect(sameUsername.status).toBe(400);
    expect(sameUsername.body).toEqual({ username: ['A user with that username already exists.'] });
    // The email of a registration refused for its username stays free.
    const retry = await api.post('/api/auth/register/', { json: { ...registration('unique3') } });
    expect(retry.status).toBe(201);
  });

  test('20 parallel registrations with one email give exactly one 201', async () => {
    const attempts = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api.post('/api/auth/register/', { json: { ...registration(`race${i}`), email: 'race@example.org' } }),
      ),
    );
    const statuses = attempts.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 400)).toHaveLength(19);
    const winner = attempts.find((a) => a.status === 201)!;
    const login = await api.post('/api/auth/login/', {
      json: { email: 'race@example.org', password: 'long-enough-password' },
    });
    expect(login.body.user.username).toBe(winner.body.username);
  });

  test('malformed JSON is a 400 with a parse error detail', async () => {
    const res = await api.post('/api/auth/register/', {
      body: '{"email": ',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^JSON parse error - /);
  });
});

describe('POST /api/auth/login/', () => {
  test('returns a token and the user, matching the email case-insensitively', async () => {
    await api.post('/api/auth/register/', { json: registration('loginuser') });
    const res = await api.post('/api/auth/login/', {
      json: { email: 'LoginUser@EXAMPLE.org', password: 'long-enough-password' },
    });
    expect(res.status).toBe(200);
    expect(res.body.token).toMatch(/^bic_lt_[0-9A-Za-z]{40}$/);
    expect(res.body.user).toEqual({
      id: expect.any(Number),
      username: 'loginuser',
      email: 'loginuser@example.org',
      first_name: 'Camillo',
      last_name: 'Golgi',
      avatar: null,
      bio: '',
      location: '',
      is_staff: false,
    });
  });

  test('a wrong password or unknown email is a 400 non-field error', async () => {
    await api.post('/api/auth/register/', { json: registration('wrongpw') });
    const wrong = await api.post('/api/auth/login/', {
      json: { email: 'wrongpw@example.org', password: 'not-the-password' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({ non_field_errors: ['Unable to log in with provided credentials.'] });
    const unknown = await api.post('/api/auth/login/', {
      json: { email: 'nobody@example.org', password: 'whatever-it-is' },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual(wrong.body);
    const missing = await api.post('/api/auth/login/', { json: {} });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ email: [expect.any(String)], password: [expect.any(String)] });
  });
});

describe('GET /api/auth/me/', () => {
  test('returns the current user for Token and Bearer schemes', async () => {
    const user = await newUser(api);
    for (const scheme of ['Token', 'Bearer']) {
      const me = await api.get('/api/auth/me/', { token: user.token, scheme });
      expect(me.status).toBe(200);
      expect(me.body).toEqual({
        id: user.id,
        username: user.username,
        email: user.email,
        first_name: user.first_name,
        last_name: user.last_name,
        avatar: null,
        bio: '',
        location: '',
      });
    }
  });

  test('401 with WWW-Authenticate without credentials or with a bad token', async () => {
    const anonymous = await api.get('/api/auth/me/');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBeTruthy();
    expect(anonymous.body).toEqual({ detail: expect.any(String) });
    const bad = await api.get('/api/auth/me/', { token: 'bic_lt_0000000000000000000000000000000000000000' });
    expect(bad.status).toBe(401);
    const garbage = await api.get('/api/auth/me/', { headers: { Authorization: 'Basic Zm9vOmJhcg==' } });
    expect(garbage.status).toBe(401);
  });
});

describe('POST /api/auth/logout/', () => {
  test('revokes the login token at once; other sessions stay valid', async () => {
    const user = await newUser(api);
    const second = await api.post('/api/auth/login/', {
      json: { email: user.email, password: user.password },
    });
    const out = await api.post('/api/auth/logout/', { token: user.token });
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ detail: expect.any(String) });
    expect((await api.get('/api/auth/me/', { token: user.token })).status).toBe(401);
    expect((await api.get('/api/auth/me/', { token: second.body.token })).status).toBe(200);
    expect((await api.post('/api/auth/logout/')).status).toBe(401);
  });
});

describe('POST /api/auth/password/change/', () => {
  test('changes the password, revokes other login tokens, keeps the current one and personal tokens', async () => {
    const user = await newUser(api);
    const other = (
      await api.post('/api/auth/login/', { json: { email: user.email, password: user.password } })
    ).body.token;
    const pat = (await api.post('/api/tokens/', { token: user.token, json: { name: 'cli' } })).body.token;
    const res = await api.post('/api/auth/password/change/', {
      token: user.token,
      json: { old_password: user.password, new_password: 'a-brand-new-password' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ detail: 'Password updated.' });
    expect((await api.get('/api/auth/me/', { token: user.token })).status).toBe(200);
    expect((await api.get('/api/auth/me/', { token: other })).status).toBe(401);
    expect((await api.get('/api/auth/me/', { token: pat, scheme: 'Bearer' })).status).toBe(200);
    expect(
      (await api.post('/api/auth/login/', { json: { email: user.email, password: user.password } })).status,
    ).toBe(400);
    expect(
      (await api.post('/api/auth/login/', { json: { email: user.email, password: 'a-brand-new-password' } }))
        .status,
    ).toBe(200);
  });

  test('a wrong old password is 400 on old_password; a short new one 400 on new_password; anonymous 401', async () => {
    const user = await newUser(api);
    const wrong = await api.post('/api/auth/password/change/', {
      token: user.token,
      json: { old_password: 'nope-nope-nope', new_password: 'another-password' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({ old_password: [expect.any(String)] });
    const short = await api.post('/api/auth/password/change/', {
      token: user.token,
      json: { old_password: user.password, new_password: 'short' },
    });
    expect(short.status).toBe(400);
    expect(short.body.new_password).toEqual([expect.stringMatching(/at least 8 characters/)]);
    expect(
      (await api.post('/api/auth/password/change/', { json: { old_password: 'a', new_password: 'b' } }))
        .status,
    ).toBe(401);
  });
});
