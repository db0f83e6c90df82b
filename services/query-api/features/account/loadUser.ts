import type { Pool } from 'pg';
import { NotFoundError } from '../../../../shared/errors/httpErrors';
import type { UserRecord } from '../../../../shared/views/userViews';

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

/** The user's row and its stream revision (the profile's ETag). */
export async function loadUser(pool: Pool, userId: number): Promise<UserRecord & { revision: bigint }> {
  const { rows } = await pool.query<Row>(
    'SELECT id, email, username, first_name, last_name, bio, location, avatar_key, is_staff, revision::text FROM users WHERE id = $1',
    [userId],
  );
  const r = rows[0];
  if (!r) throw new NotFoundError('User not found.');
  return {
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
  };
}
