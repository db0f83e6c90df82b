import type { RecordedEvent } from '#shared/eventStore/eventStore';
import type { Projection, ProjectionContext } from '#shared/projections/projection';
import type { UserEvent } from '#shared/domain/accounts/events';
import type { AccessTokenUsed } from '#shared/domain/accounts/tokenUsage';

type Handled = UserEvent | AccessTokenUsed;

/** Read model of accounts and tokens: `users` and `access_tokens`, used by authentication and the account endpoints. */
export const accountsProjection: Projection = {
  // Its checkpoints' key and the `projection` label of its metrics: under a new name it would install
  // as a new projection, live at once with empty tables, so the feature's first name stays here.
  name: 'identity',
  version: 1,
  tables: ['users', 'access_tokens'],
  eventTypes: new Set([
    'UserRegistered',
    'UserProfileUpdated',
    'UserPasswordChanged',
    'UserStaffStatusChanged',
    'AccessTokenIssued',
    'AccessTokenRevoked',
    'AccessTokenUsed',
  ]),

  async createTables({ client, table }) {
    await client.query(`
      CREATE TABLE ${table('users')} (
        id integer PRIMARY KEY,
        email text NOT NULL,
        username text NOT NULL,
        first_name text NOT NULL,
        last_name text NOT NULL,
        bio text NOT NULL DEFAULT '',
        location text NOT NULL DEFAULT '',
        avatar_key text,
        is_staff boolean NOT NULL DEFAULT false,
        date_joined timestamptz NOT NULL,
        password_changed_at timestamptz,
        revision bigint NOT NULL DEFAULT 0
      )`);
    await client.query(`
      CREATE TABLE ${table('access_tokens')} (
        id uuid PRIMARY KEY,
        user_id integer NOT NULL,
        kind text NOT NULL,
        name text NOT NULL,
        token_hash text NOT NULL UNIQUE,
        created_at timestamptz NOT NULL,
        expires_at timestamptz,
        revoked_at timestamptz,
        last_used_at timestamptz
      )`);
    await client.query(`CREATE INDEX ON ${table('access_tokens')} (user_id, created_at DESC)`);
  },

  async apply(ctx, events) {
    const changed: string[] = [];
    for (const event of events as readonly RecordedEvent<Handled['type']>[]) {
      changed.push(...(await applyOne(ctx, { type: event.type, data: event.data } as Handled)));
      if (event.streamName.startsWith('user-')) changed.push(await recordRevision(ctx, event));
    }
    return changed;
  },
};

/** The user stream's revision, served as the profile's weak ETag (optimistic concurrency over HTTP). */
async function recordRevision({ client, table }: ProjectionContext, event: RecordedEvent): Promise<string> {
  const userId = Number(event.streamName.slice('user-'.length));
  await client.query(`UPDATE ${table('users')} SET revision = GREATEST(revision, $2) WHERE id = $1`, [
    userId,
    event.streamRevision.toString(),
  ]);
  return `user:${userId}`;
}

async function applyOne({ client, table }: ProjectionContext, event: Handled): Promise<string[]> {
  switch (event.type) {
    case 'UserRegistered': {
      const d = event.data;
      await client.query(
        `INSERT INTO ${table('users')} (id, email, username, first_name, last_name, is_staff, date_joined)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
        [d.userId, d.email, d.username, d.firstName, d.lastName, d.isStaff, d.registeredAt],
      );
      return [`user:${d.userId}`];
    }
    case 'UserProfileUpdated': {
      const d = event.data;
      await client.query(
        `UPDATE ${table('users')} SET
           first_name = COALESCE($2, first_name), last_name = COALESCE($3, last_name),
           bio = COALESCE($4, bio), location = COALESCE($5, location),
           avatar_key = CASE WHEN $6::boolean THEN $7 ELSE avatar_key END
         WHERE id = $1`,
        [
          d.userId,
          d.firstName ?? null,
          d.lastName ?? null,
          d.bio ?? null,
          d.location ?? null,
          d.avatarKey !== undefined,
          d.avatarKey ?? null,
        ],
      );
      return [`user:${d.userId}`];
    }
    case 'UserPasswordChanged':
      await client.query(`UPDATE ${table('users')} SET password_changed_at = $2 WHERE id = $1`, [
        event.data.userId,
        event.data.changedAt,
      ]);
      return [];
    case 'UserStaffStatusChanged':
      await client.query(`UPDATE ${table('users')} SET is_staff = $2 WHERE id = $1`, [
        event.data.userId,
        event.data.isStaff,
      ]);
      return [`user:${event.data.userId}`];
    case 'AccessTokenIssued': {
      const d = event.data;
      await client.query(
        `INSERT INTO ${table('access_tokens')} (id, user_id, kind, name, token_hash, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
        [d.tokenId, d.userId, d.kind, d.name, d.tokenHash, d.createdAt, d.expiresAt],
      );
      return [];
    }
    case 'AccessTokenRevoked':
      await client.query(
        `UPDATE ${table('access_tokens')} SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1`,
        [event.data.tokenId, event.data.revokedAt],
      );
      return [`token:${event.data.tokenId}`];
    case 'AccessTokenUsed':
      await client.query(
        `UPDATE ${table('access_tokens')} SET last_used_at = GREATEST(last_used_at, $2::timestamptz) WHERE id = $1`,
        [event.data.tokenId, event.data.usedAt],
      );
      return [];
  }
}
