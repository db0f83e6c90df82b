import type { Pool } from 'pg';
import type { EventStore } from '#shared/eventStore/eventStore';
import { TOKEN_USE_RECORD_INTERVAL_MS } from '#shared/domain/accounts/tokenUsage';
import { ProjectionProgress } from '#shared/projections/projectionProgress';
import { tokenUseRecorder } from '#shared/commandHandling/tokenUseRecorder';
import { TokenAuthenticator } from './tokenAuthenticator';
import { generateTokenSecret, hashTokenSecret } from './tokens';

/** A read model holding `count` valid personal tokens, and a store that records token-use appends. */
function setUp(count: number, expiresAt: Date | null = null) {
  const secrets = Array.from({ length: count }, () => generateTokenSecret('personal'));
  const rows = new Map(
    secrets.map((secret, i) => [
      hashTokenSecret(secret),
      {
        id: `token-${i}`,
        user_id: i,
        kind: 'personal',
        expires_at: expiresAt,
        revoked_at: null,
        username: `u${i}`,
        email: `u${i}@example.org`,
        is_staff: false,
      },
    ]),
  );
  let lookups = 0;
  const pool = {
    query: (_sql: string, [hash]: [string]) => {
      lookups += 1;
      return Promise.resolve({ rows: rows.has(hash) ? [rows.get(hash)] : [] });
    },
  } as unknown as Pool;
  const appended: string[] = [];
  const store = {
    appendToStream: (stream: string) => {
      appended.push(stream);
      return Promise.resolve({ nextExpectedRevision: 0n, position: { commit: 0n, prepare: 0n } });
    },
  } as unknown as EventStore;
  let now = Date.parse('2030-01-01T00:00:00Z');
  const authenticator = new TokenAuthenticator({
    pool,
    store,
    recordUse: tokenUseRecorder(store),
    now: () => now,
  });
  return {
    secrets,
    appended,
    authenticator,
    rows,
    lookups: () => lookups,
    advance: (ms: number) => (now += ms),
  };
}

test('concurrent requests share one lookup; a token past half its cache life is refreshed ahead, never served past it', async () => {
  const { secrets, authenticator, rows, lookups, advance } = setUp(1);
  const header = `Bearer ${secrets[0]!}`;
  await Promise.all(Array.from({ length: 10 }, () => authenticator.authenticate(header)));
  expect(lookups()).toBe(1);

  advance(300); // past half the 500 ms TTL: answered from the cache, refreshed behind it
  await authenticator.authenticate(header);
  await new Promise((resolve) => setImmediate(resolve));
  expect(lookups()).toBe(2);

  // Revoked meanwhile: the next lookup (at the latest once the TTL has passed) refuses it.
  rows.get(hashTokenSecret(secrets[0]!))!.revoked_at = new Date() as unknown as null;
  advance(501);
  await expect(authenticator.authenticate(header)).rejects.toThrow('Invalid token.');
  await expect(authenticator.authenticate(header)).rejects.toThrow('Invalid token.');
});

test('token uses are remembered only for the record interval, so memory stays bounded', async () => {
  const { secrets, appended, authenticator, advance } = setUp(200);
  for (const secret of secrets) await authenticator.authenticate(`Bearer ${secret}`);
  expect(authenticator.trackedTokenUses).toBe(200);
  expect(appended).toHaveLength(200);

  advance(TOKEN_USE_RECORD_INTERVAL_MS);
  await authenticator.authenticate(`Token ${secrets[0]!}`);
  // Every older entry has aged out; only the use just recorded is remembered.
  expect(authenticator.trackedTokenUses).toBe(1);
  expect(appended).toHaveLength(201);
});

test('a token used again within the interval is recorded once, and again after it', async () => {
  const { secrets, appended, authenticator, advance } = setUp(2);
  const [a, b] = secrets as [string, string];
  await authenticator.authenticate(`Bearer ${a}`);
  advance(TOKEN_USE_RECORD_INTERVAL_MS / 2);
  await authenticator.authenticate(`Bearer ${b}`);
  await authenticator.authenticate(`Bearer ${a}`);
  expect(appended).toEqual(['accessTokenUsage-token-0', 'accessTokenUsage-token-1']);

  advance(TOKEN_USE_RECORD_INTERVAL_MS / 2); // a's record is now a full interval old, b's half
  await authenticator.authenticate(`Bearer ${a}`);
  await authenticator.authenticate(`Bearer ${b}`);
  expect(appended).toEqual([
    'accessTokenUsage-token-0',
    'accessTokenUsage-token-1',
    'accessTokenUsage-token-0',
  ]);
  expect(authenticator.trackedTokenUses).toBe(2);
});

test('expiry follows the injected clock', async () => {
  const expiresAt = new Date(Date.parse('2030-01-01T00:00:01.500Z'));
  const { secrets, authenticator, advance } = setUp(1, expiresAt);
  await expect(authenticator.authenticate(`Bearer ${secrets[0]!}`)).resolves.toMatchObject({ userId: 0 });
  advance(1500);
  await expect(authenticator.authenticate(`Bearer ${secrets[0]!}`)).rejects.toThrow(/expired/i);
});

describe('a token the read models have not caught up with yet', () => {
  const head = { commit: 10n, prepare: 10n };
  function lagging() {
    const secret = generateTokenSecret('login');
    const rows = new Map<string, unknown>();
    const pool = {
      query: (_sql: string, [hash]: [string]) =>
        Promise.resolve({ rows: rows.has(hash) ? [rows.get(hash)] : [] }),
    } as unknown as Pool;
    const store = {
      headPosition: () => Promise.resolve(head),
      appendToStream: () => Promise.resolve({ nextExpectedRevision: 0n, position: head }),
    } as unknown as EventStore;
    const progress = new ProjectionProgress();
    const project = () => {
      rows.set(hashTokenSecret(secret), {
        id: 'token-1',
        user_id: 1,
        kind: 'login',
        expires_at: null,
        revoked_at: null,
        username: 'u1',
        email: 'u1@example.org',
        is_staff: false,
      });
      progress.advance(head);
    };
    return {
      secret,
      progress,
      project,
      authenticator: new TokenAuthenticator({
        pool,
        store,
        recordUse: tokenUseRecorder(store),
        progress,
        lagWaitMs: 2000,
      }),
    };
  }

  test('is accepted once the projection reaches the head, instead of a 401', async () => {
    const { secret, project, authenticator } = lagging();
    const answer = authenticator.authenticate(`Token ${secret}`);
    setTimeout(project, 20);
    await expect(answer).resolves.toMatchObject({ userId: 1, tokenId: 'token-1' });
  });

  test('is refused when the read models are at the head already', async () => {
    const { secret, progress, authenticator } = lagging();
    progress.advance(head);
    await expect(authenticator.authenticate(`Token ${secret}`)).rejects.toThrow('Invalid token.');
  });
});
