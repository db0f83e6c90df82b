/**
 * Token use is recorded as events too (so last_used_at survives a rebuild), but at most once a
 * minute per token and in a stream of its own, so it never contends with the user's stream.
 */
export type AccessTokenUsed = {
  readonly type: 'AccessTokenUsed';
  readonly data: { readonly tokenId: string; readonly userId: number; readonly usedAt: string };
};

export const tokenUsageStreamName = (tokenId: string): string => `accessTokenUsage-${tokenId}`;

export const TOKEN_USE_RECORD_INTERVAL_MS = 60_000;
