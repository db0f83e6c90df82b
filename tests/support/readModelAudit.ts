import type { Client } from 'pg';

/**
 * SQL over the event store and the read models of one database, to prove that the projector
 * applied every stored event exactly once.
 */
type Counts = Record<string, number>;

/** "commit.prepare" of the newest stored event. */
async function storeHead(db: Client): Promise<string> {
  const { rows } = await db.query<{ head: string }>(
    `SELECT transaction_id::text || '.' || global_position::text AS head
       FROM event_store.events ORDER BY transaction_id DESC, global_position DESC LIMIT 1`,
  );
  return rows[0]?.head ?? 'empty';
}

async function checkpoints(db: Client): Promise<string[]> {
  const { rows } = await db.query<{ at: string }>(
    `SELECT commit_position::text || '.' || prepare_position::text AS at FROM rm.projection_checkpoints`,
  );
  return rows.map((r) => r.at);
}

/**
 * Resolves once writes have stopped (the head stays put between two looks) and every projection's
 * checkpoint is at that head. Token-use events are appended in the background, hence the settling.
 */
export async function waitUntilCaughtUp(db: Client, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let previousHead = '';
  let last = '';
  while (Date.now() < deadline) {
    const head = await storeHead(db);
    const at = await checkpoints(db);
    if (head === previousHead && at.length > 0 && at.every((p) => p === head)) return;
    previousHead = head;
    last = `head ${head}, checkpoints ${at.join(', ')}`;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`read models did not catch up within ${timeoutMs} ms (${last})`);
}

const toCounts = (rows: { event_type: string; n: number }[]): Counts =>
  Object.fromEntries(rows.map((r) => [r.event_type, r.n]));

/** Stored events per type, for the types given. */
export async function storedEventCounts(db: Client, types: Iterable<string>): Promise<Counts> {
  const { rows } = await db.query<{ event_type: string; n: number }>(
    `SELECT event_type, count(*)::int AS n FROM event_store.events WHERE event_type = ANY($1) GROUP BY event_type`,
    [[...types]],
  );
  return toCounts(rows);
}

/** What the event_type_counts projection says it applied, every row of it. */
export async function appliedEventCounts(db: Client): Promise<Counts> {
  const { rows } = await db.query<{ event_type: string; n: number }>(
    `SELECT event_type, events::int AS n FROM event_type_counts`,
  );
  return toCounts(rows);
}

/** The identity read model's totals next to what the events say they must be. */
export async function identityTotals(db: Client): Promise<{ readModel: Counts; events: Counts }> {
  const { rows } = await db.query<{ readModel: Counts; events: Counts }>(`
    SELECT json_build_object(
             'users', (SELECT count(*) FROM users),
             'accessTokens', (SELECT count(*) FROM access_tokens),
             'revokedTokens', (SELECT count(*) FROM access_tokens WHERE revoked_at IS NOT NULL)) AS "readModel",
           json_build_object(
             'users', (SELECT count(*) FROM event_store.events WHERE event_type = 'UserRegistered'),
             'accessTokens', (SELECT count(*) FROM event_store.events WHERE event_type = 'AccessTokenIssued'),
             'revokedTokens', (SELECT count(DISTINCT data->>'tokenId') FROM event_store.events
                                WHERE event_type = 'AccessTokenRevoked')) AS events`);
  return rows[0]!;
}
