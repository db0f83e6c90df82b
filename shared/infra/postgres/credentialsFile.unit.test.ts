import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadPasswords } from './credentialsFile';

let dir: string;
beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'credentials-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const modeOf = (file: string): number => statSync(file).mode & 0o777;

test('generates a distinct random password per role, kept in a file only its owner can read', async () => {
  const file = path.join(dir, 'postgres-credentials.json');
  const passwords = await loadPasswords(file, ['postgres', 'app']);
  expect(passwords.postgres).toMatch(/^[\w-]{32}$/);
  expect(passwords.app).toMatch(/^[\w-]{32}$/);
  expect(passwords.app).not.toBe(passwords.postgres);
  expect(modeOf(file)).toBe(0o600);
  expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ passwords });
  await expect(loadPasswords(file, ['postgres', 'app'])).resolves.toEqual(passwords);
});

test('adds a missing role without changing the others, and re-tightens a loosened file', async () => {
  const file = path.join(dir, 'c.json');
  const before = await loadPasswords(file, ['postgres']);
  chmodSync(file, 0o644);
  await loadPasswords(file, ['postgres']);
  expect(modeOf(file)).toBe(0o600);
  const after = await loadPasswords(file, ['postgres', 'owner']);
  expect(after.postgres).toBe(before.postgres);
  expect(after.owner).toMatch(/^[\w-]{32}$/);
  expect(modeOf(file)).toBe(0o600);
});

test('processes starting at once agree on every password', async () => {
  const file = path.join(dir, 'c.json');
  const results = await Promise.all(
    Array.from({ length: 8 }, (_, i) => loadPasswords(file, ['postgres', `role${i % 2}`])),
  );
  const final = (JSON.parse(readFileSync(file, 'utf8')) as { passwords: Record<string, string> }).passwords;
  for (const result of results)
    for (const [role, password] of Object.entries(result)) expect(final[role]).toBe(password);
});
