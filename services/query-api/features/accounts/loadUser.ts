import type { Pool } from 'pg';
import type { UserRecord } from '#shared/views/userViews';

export type UserWithRevision = UserRecord & { revision: bigint };

type Row = {
  id: number;
  email: string;
  username: string;
  first_name: string;
  last_name: string;
  bio: string;
  location: string;
  avatar_key: string | null;
  is_staff: boolean;
  revision: string;
};

/** The users' rows with their stream revisions (the profile's ETag), by id; unknown ids are absent. */
export async function loadUsers(
  pool: Pool,
  userIds: readonly number[],
): Promise<Map<number, UserWithRevision>> {
  const { rows } = await pool.query<Row>(
    `SELECT id, email, username, first_name, last_name, bio, location, avatar_key, is_staff, revision::text
       FROM users WHERE id = ANY($1::integer[])`,
    [userIds],
  );
  return new Map(
    rows.map((r) => [
      r.id,
      {
        id: r.id,
        email: r.email,
        username: r.username,
        firstName: r.first_name,
        lastName: r.last_name,
        bio: r.bio,
        location: r.location,
        avatarKey: r.avatar_key,
        isStaff: r.is_staff,
        revision: BigInt(r.revision),
      },
    ]),
  );
}
