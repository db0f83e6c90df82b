/** A personal access token as listed (never with its secret). */
export interface TokenRow {
  readonly id: string;
  readonly name: string;
  readonly created_at: Date;
  readonly last_used_at: Date | null;
  readonly expires_at: Date | null;
  readonly revoked_at: Date | null;
}

export const tokenJson = (t: TokenRow) => ({
  id: t.id,
  name: t.name,
  created_at: t.created_at.toISOString(),
  last_used_at: t.last_used_at?.toISOString() ?? null,
  expires_at: t.expires_at?.toISOString() ?? null,
  is_revoked: t.revoked_at !== null,
});

export const tokenSchema = {
  type: 'object',
  required: ['id', 'name', 'created_at', 'last_used_at', 'expires_at', 'is_revoked'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    last_used_at: { type: ['string', 'null'], format: 'date-time' },
    expires_at: { type: ['string', 'null'], format: 'date-time' },
    is_revoked: { type: 'boolean' },
  },
} as const;
