import type { Client } from 'pg';
import type { LoadLedger, RegisteredAccount } from './loadLedger';
import { callApi } from './unreliableHttp';

/**
 * Every write a client saw acknowledged must be in the read models after any number of crashes.
 * Returns one line per broken promise (empty when all were kept).
 */
export async function brokenPromises(db: Client, ledger: LoadLedger): Promise<string[]> {
  return [...(await missingUsersAndBios(db, ledger)), ...(await missingTokenChanges(db, ledger))];
}

async function missingUsersAndBios(db: Client, ledger: LoadLedger): Promise<string[]> {
  const { rows } = await db.query<{ id: number; email: string; bio: string }>(
    'SELECT id, email, bio FROM users WHERE id = ANY($1)',
    [ledger.registered.map((a) => a.userId)],
  );
  const users = new Map(rows.map((u) => [u.id, u]));
  const problems: string[] = [];
  for (const account of ledger.registered) {
    const user = users.get(account.userId);
    if (user?.email !== account.email)
      problems.push(`registered user ${account.userId} <${account.email}> is not in users`);
  }
  for (const [userId, possible] of ledger.possibleBios) {
    const bio = users.get(userId)?.bio;
    if (bio !== undefined && !possible.includes(bio)) {
      problems.push(
        `user ${userId} has bio "${bio}", but the last acknowledged update (or a later unanswered one) is one of ${JSON.stringify(possible)}`,
      );
    }
  }
  return problems;
}

async function missingTokenChanges(db: Client, ledger: LoadLedger): Promise<string[]> {
  const { rows } = await db.query<{ id: string; revoked: boolean }>(
    'SELECT id::text, revoked_at IS NOT NULL AS revoked FROM access_tokens WHERE id = ANY($1::uuid[])',
    [[...ledger.issuedTokens.keys()]],
  );
  const tokens = new Map(rows.map((t) => [t.id, t.revoked]));
  const problems: string[] = [];
  for (const [id, userId] of ledger.issuedTokens) {
    if (!tokens.has(id))
      problems.push(`token ${id} of user ${userId} was created (201) but is not in access_tokens`);
  }
  for (const id of ledger.revokedTokens) {
    if (tokens.get(id) !== true)
      problems.push(`token ${id} was revoked (204) but is not revoked in access_tokens`);
  }
  return problems;
}

/** Logs every account in over HTTP, a few at a time; returns the ones that could not. */
export async function accountsThatCannotLogIn(
  baseUrl: string,
  accounts: readonly RegisteredAccount[],
  parallel = 4,
): Promise<string[]> {
  const failures: string[] = [];
  const queue = [...accounts];
  const worker = async (): Promise<void> => {
    for (let account = queue.pop(); account; account = queue.pop()) {
      const result = await callApi(baseUrl, 'POST', '/api/auth/login/', {
        body: { email: account.email, password: account.password },
      });
      if (result.status !== 200) failures.push(`${account.email}: ${JSON.stringify(result)}`);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return failures;
}
