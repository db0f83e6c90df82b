import type { Client } from 'pg';
import { waitFor } from './waitFor';

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
  let previousHead = '';
  await waitFor(
    'writes to stop and every projection to reach the head',
    async () => {
      const head = await storeHead(db);
      const settled = head === previousHead;
      previousHead = head;
      return { head, settled, checkpoints: await checkpoints(db) };
    },
    {
      timeoutMs,
      intervalMs: 250,
      until: ({ head, settled, checkpoints: at }) => settled && at.length > 0 && at.every((p) => p === head),
    },
  );
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

/**
 * The search index against the brains read model and the names it denormalises (species, atlases,
 * categories), and its trigger-kept counts against counts of its documents. One line per
 * disagreement; empty when the index says exactly what the other read models say.
 */
export async function searchIndexDifferences(db: Client): Promise<string[]> {
  const documents = await db.query<{ id: number; issue: string }>(`
    SELECT coalesce(b.id, d.brain_id) AS id,
           CASE WHEN d.brain_id IS NULL THEN 'brain missing from the index'
                WHEN b.id IS NULL THEN 'document of a deleted brain'
                ELSE 'document differs from the brain' END AS issue
      FROM brains b
      FULL JOIN (SELECT * FROM brain_search WHERE NOT removed) d ON d.brain_id = b.id
      LEFT JOIN species s ON s.id = b.species_id
      LEFT JOIN atlases a ON a.id = b.atlas_id
      LEFT JOIN categories c ON c.id = b.category_id
     WHERE b.id IS NULL OR d.brain_id IS NULL
        OR (d.readable_id, d.name, d.description, d.verified, d.uploader_id, d.date_uploaded, d.category_id,
            d.category_name)
           IS DISTINCT FROM (b.readable_id, b.name, b.description, b.verified, b.uploader_id, b.date_uploaded,
            b.category_id, c.name)
        OR (d.species_id, d.species_name, d.scientific_name, d.atlas_id, d.atlas_name)
           IS DISTINCT FROM (b.species_id, s.name, s.scientific_name, b.atlas_id, a.name)
     ORDER BY 1 LIMIT 20`);
  // A placement as one key (format() writes NULL, no atlas, as nothing): NULLs never join equal.
  const placement = "format('%s/%s/%s/%s', species_id, atlas_id, category_id, verified)";
  const counts = await db.query<{ placement: string; kept: string; counted: string }>(`
    WITH counted AS (
      SELECT ${placement} AS placement, count(*) AS n FROM brain_search WHERE NOT removed GROUP BY 1),
    kept AS (SELECT ${placement} AS placement, n FROM brain_search_counts WHERE n <> 0)
    SELECT coalesce(k.placement, c.placement) AS placement,
           coalesce(k.n, 0)::text AS kept, coalesce(c.n, 0)::text AS counted
      FROM kept k FULL JOIN counted c ON c.placement = k.placement
     WHERE coalesce(k.n, 0) <> coalesce(c.n, 0)
     ORDER BY 1 LIMIT 20`);
  return [
    ...documents.rows.map((r) => `brain ${r.id}: ${r.issue}`),
    ...counts.rows.map((r) => `count of ${r.placement}: kept ${r.kept}, counted ${r.counted}`),
  ];
}
