import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { newUser } from '#tests/support/httpClient';
import { type CliWorld, loggedInUser, startCliWorld } from './cliService';
import { startInterceptingProxy } from './interceptingProxy';
import { cliEnv, freshConfigDir, runCli } from './runCli';

let world: CliWorld;

beforeAll(async () => {
  world = await startCliWorld();
});

afterAll(async () => {
  await world?.service.close();
});

const storedConfig = (configDir: string) =>
  JSON.parse(readFileSync(path.join(configDir, 'config.json'), 'utf8')) as Record<string, string>;

const mode = (file: string): number => statSync(file).mode & 0o777;

describe('bic login', () => {
  it('creates a personal access token named after the machine and stores it 0600 in a 0700 directory', async () => {
    const user = await newUser(world.api);
    const configDir = path.join(freshConfigDir(), 'nested', 'bic');
    const env = cliEnv(world.service.url, configDir);

    const login = await runCli(['login', '--email', user.email, '--password-stdin'], env, {
      input: `${user.password}\n`,
    });

    expect(login).toMatchObject({ code: 0, stderr: '' });
    expect(login.stdout).toContain(`as ${user.username}`);
    expect(mode(path.join(configDir, 'config.json'))).toBe(0o600);
    expect(mode(configDir)).toBe(0o700);
    const config = storedConfig(configDir);
    expect(config.server).toBe(world.service.url);
    expect(config.token).toMatch(/^bic_pat_/);
    // The server holds a token by that name, and the stored secret authenticates as the user.
    const me = await world.api.get('/api/auth/me/', { token: config.token, scheme: 'Bearer' });
    expect(me.body.username).toBe(user.username);
    const tokens = await world.api.get('/api/tokens/', { token: config.token });
    expect(tokens.body).toEqual([
      expect.objectContaining({ id: config.token_id, name: expect.stringMatching(/^bic on ./) }),
    ]);

    const whoami = await runCli(['whoami'], env);
    expect(whoami.code).toBe(0);
    expect(whoami.stdout).toContain(`${user.username} <${user.email}>`);
  });

  it('refuses a wrong password with one line and exit code 3, storing nothing', async () => {
    const user = await newUser(world.api);
    const configDir = freshConfigDir();
    const env = cliEnv(world.service.url, configDir);

    const login = await runCli(['login', '--email', user.email, '--password-stdin'], env, {
      input: 'wrong-password',
    });

    expect(login.code).toBe(3);
    expect(login.stderr).toBe('bic: login failed: Unable to log in with provided credentials.\n');
    expect(() => statSync(path.join(configDir, 'config.json'))).toThrow();
  });

  it('asks for the password only on a terminal: without one and without --password-stdin it is a usage error', async () => {
    const env = cliEnv(world.service.url, freshConfigDir());
    const login = await runCli(['login', '--email', 'someone@example.org'], env);
    expect(login.code).toBe(2);
    expect(login.stderr).toContain('--password-stdin');
  });

  it('--token stores an existing token after checking it, and refuses a bad one (exit 3)', async () => {
    const user = await loggedInUser(world);
    const created = await runCli(['tokens', 'create', 'for another machine'], user.env);
    expect(created.code).toBe(0);
    const secret = created.stdout.trim();
    expect(secret).toMatch(/^bic_pat_/);

    const other = cliEnv(world.service.url, freshConfigDir());
    const stored = await runCli(['login', '--token', secret], other);
    expect(stored.code).toBe(0);
    expect((await runCli(['whoami'], other)).stdout).toContain(user.username);

    const bad = await runCli(
      ['login', '--token', 'bic_pat_not-a-real-token'],
      cliEnv(world.service.url, freshConfigDir()),
    );
    expect(bad.code).toBe(3);
    expect(bad.stderr).toMatch(/^bic: not authenticated: .*\(run `bic login`\)\n$/);
  });
});

describe('the stored token', () => {
  it('is sent only to the server it was stored for', async () => {
    const user = await loggedInUser(world);
    const elsewhere = await startInterceptingProxy(world.service.url, () => undefined);
    try {
      const env = { ...user.env, BIC_SERVER: elsewhere.url };
      const whoami = await runCli(['whoami'], env);
      expect(whoami).toMatchObject({
        code: 3,
        stderr: `bic: not logged in to ${elsewhere.url} (run \`bic login\`)\n`,
      });
      expect((await runCli(['brains', 'list'], env)).code).toBe(0);
      expect(elsewhere.seen).toHaveLength(1);
      expect(elsewhere.seen[0]!.headers.authorization).toBeUndefined();
    } finally {
      await elsewhere.close();
    }
  });
});

describe('bic tokens', () => {
  it('lists, creates and revokes tokens; a revoked token is refused at once', async () => {
    const user = await loggedInUser(world);
    const created = await runCli(['tokens', 'create', 'ci job', '--json'], user.env);
    expect(created.code).toBe(0);
    const token = JSON.parse(created.stdout);
    expect(token).toMatchObject({ name: 'ci job', token: expect.stringMatching(/^bic_pat_/) });

    const listed = await runCli(['tokens', 'list'], user.env);
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^\s*ID\s+NAME\s+CREATED\s+LAST USED\s+EXPIRES$/);
    expect(lines).toHaveLength(3);
    expect(lines.find((l) => l.includes(token.id))).toContain('ci job');
    expect(lines.find((l) => l.startsWith('*'))).toContain(storedConfig(user.configDir).token_id);

    const revoked = await runCli(['tokens', 'revoke', token.id], user.env);
    expect(revoked).toMatchObject({ code: 0, stdout: `Revoked token ${token.id}\n` });
    expect((await world.api.get('/api/auth/me/', { token: token.token })).status).toBe(401);

    // The revoked token, used by the CLI: the 401 line and exit code 3.
    const withRevoked = await runCli(['whoami'], { ...user.env, BIC_TOKEN: token.token });
    expect(withRevoked.code).toBe(3);
    expect(withRevoked.stderr).toMatch(/^bic: not authenticated: .+ \(run `bic login`\)\n$/);
  });

  it("another user's token: 403 with exit code 4; an unknown one: 404 with exit code 5", async () => {
    const [alice, bob] = await Promise.all([loggedInUser(world), loggedInUser(world)]);
    const bobsTokenId = storedConfig(bob.configDir).token_id!;

    const forbidden = await runCli(['tokens', 'revoke', bobsTokenId], alice.env);
    expect(forbidden.code).toBe(4);
    expect(forbidden.stderr).toMatch(/^bic: forbidden: .+\n$/);

    const missing = await runCli(['tokens', 'revoke', '00000000-0000-4000-8000-000000000000'], alice.env);
    expect(missing.code).toBe(5);
    expect(missing.stderr).toMatch(/^bic: not found: .+\n$/);
  });

  it('a token name the server refuses gives the field and its message, exit code 6', async () => {
    const user = await loggedInUser(world);
    const refused = await runCli(['tokens', 'create', 'x'.repeat(101)], user.env);
    expect(refused.code).toBe(6);
    expect(refused.stderr).toMatch(/^bic: invalid request \(400\): name: .+\n$/);
  });
});

describe('bic logout', () => {
  it('revokes the token on the server and forgets it', async () => {
    const user = await loggedInUser(world);
    const { token } = storedConfig(user.configDir);

    const logout = await runCli(['logout'], user.env);

    expect(logout.code).toBe(0);
    expect((await world.api.get('/api/auth/me/', { token, scheme: 'Bearer' })).status).toBe(401);
    expect(storedConfig(user.configDir)).toEqual({ server: world.service.url });
    expect(mode(path.join(user.configDir, 'config.json'))).toBe(0o600);
    const after = await runCli(['whoami'], user.env);
    expect(after.code).toBe(3);
    expect(after.stderr).toBe(`bic: not logged in to ${world.service.url} (run \`bic login\`)\n`);
  });

  it('a second login on the same machine revokes the token it replaces', async () => {
    const user = await loggedInUser(world);
    const first = storedConfig(user.configDir).token!;
    const again = await runCli(['login', '--email', user.email, '--password-stdin'], user.env, {
      input: user.password,
    });
    expect(again.code).toBe(0);
    expect((await world.api.get('/api/auth/me/', { token: first })).status).toBe(401);
    const tokens = await world.api.get('/api/tokens/', { token: storedConfig(user.configDir).token });
    expect(tokens.body).toHaveLength(1);
  });
});
