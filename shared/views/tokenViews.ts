import { type Static, Type } from '@sinclair/typebox';
import { Nullable } from './nullable';

/** A row of the `access_tokens` read model (never with its secret). */
export interface TokenRow {
  readonly id: string;
  readonly name: string;
  readonly created_at: Date;
  readonly last_used_at: Date | null;
  readonly expires_at: Date | null;
  readonly revoked_at: Date | null;
}

export const tokenJson = (t: TokenRow): TokenJson => ({
  id: t.id,
  name: t.name,
  created_at: t.created_at.toISOString(),
  last_used_at: t.last_used_at?.toISOString() ?? null,
  expires_at: t.expires_at?.toISOString() ?? null,
  is_revoked: t.revoked_at !== null,
});

/** A personal access token as answered. */
export const tokenSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  last_used_at: Nullable(Type.String({ format: 'date-time' })),
  expires_at: Nullable(Type.String({ format: 'date-time' })),
  is_revoked: Type.Boolean(),
});
export type TokenJson = Static<typeof tokenSchema>;
