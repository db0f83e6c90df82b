import type { ProjectionContext } from './projection';

/**
 * Exact "how many X does this Y have" counters (brains_count, atlases_count) kept by a projection
 * for itself: a membership table says which owner each member counts for, so a member that moves
 * (a brain given another atlas) or goes away is taken off the right counter. The runner applies
 * each event exactly once, so a plain +1/-1 stays exact.
 */
export interface CounterSpec {
  /** Logical membership table: (kind text, member_id integer, owner_id integer), PK (kind, member_id). */
  readonly members: string;
  /** Logical table holding the counters, keyed by `id`. */
  readonly owners: string;
  /** kind → the counter column it feeds, e.g. { brain: 'brains_count', atlas: 'atlases_count' }. */
  readonly counters: Readonly<Record<string, string>>;
}

export function membershipTableSql(table: string): string {
  return `CREATE TABLE ${table} (
    kind text NOT NULL,
    member_id integer NOT NULL,
    owner_id integer NOT NULL,
    PRIMARY KEY (kind, member_id)
  )`;
}

/** Makes `memberId` count for `ownerId` (null: for nobody), adjusting both counters. */
export async function countMemberFor(
  { client, table }: ProjectionContext,
  spec: CounterSpec,
  kind: string,
  memberId: number,
  ownerId: number | null,
): Promise<void> {
  const column = spec.counters[kind];
  if (!column || !Object.hasOwn(spec.counters, kind)) throw new Error(`no counter for ${kind}`);
  const removed = await client.query<{ owner_id: number }>(
    `DELETE FROM ${table(spec.members)} WHERE kind = $1 AND member_id = $2 RETURNING owner_id`,
    [kind, memberId],
  );
  const previous = removed.rows[0]?.owner_id ?? null;
  if (previous !== null)
    await client.query(`UPDATE ${table(spec.owners)} SET ${column} = ${column} - 1 WHERE id = $1`, [
      previous,
    ]);
  if (ownerId === null) return;
  await client.query(`INSERT INTO ${table(spec.members)} (kind, member_id, owner_id) VALUES ($1, $2, $3)`, [
    kind,
    memberId,
    ownerId,
  ]);
  await client.query(`UPDATE ${table(spec.owners)} SET ${column} = ${column} + 1 WHERE id = $1`, [ownerId]);
}

/**
 * countMemberFor for members that count for no one yet (just created), all in one statement:
 * inserts their memberships and adds to each owner's counter how many it gained.
 */
export async function countNewMembersFor(
  { client, table }: ProjectionContext,
  spec: CounterSpec,
  kind: string,
  members: readonly { readonly memberId: number; readonly ownerId: number | null }[],
): Promise<void> {
  const column = spec.counters[kind];
  if (!column || !Object.hasOwn(spec.counters, kind)) throw new Error(`no counter for ${kind}`);
  await client.query(
    `WITH added AS (
       INSERT INTO ${table(spec.members)} (kind, member_id, owner_id)
       SELECT $1, m, o FROM unnest($2::integer[], $3::integer[]) AS x (m, o) WHERE o IS NOT NULL
       RETURNING owner_id)
     UPDATE ${table(spec.owners)} AS owner SET ${column} = owner.${column} + gained.n
     FROM (SELECT owner_id, count(*) AS n FROM added GROUP BY owner_id) gained
     WHERE owner.id = gained.owner_id`,
    [kind, members.map((m) => m.memberId), members.map((m) => m.ownerId)],
  );
}
