import type { Pool } from 'pg';
import { AuthenticationError } from '#shared/errors/httpErrors';
import { type EventStore, comparePositions } from '#shared/eventStore/eventStore';
import type { ProjectionProgress } from '#shared/projections/projectionProgress';
import type { Logger } from '#shared/projections/logger';
import { TOKEN_USE_RECORD_INTERVAL_MS } from '#shared/domain/accounts/tokenUsage';
import type { Authenticator, Principal } from './principal';
import { hashTokenSecret, looksLikeTokenSecret } from './tokens';

interface CachedToken {
  readonly principal: Principal;
  readonly expiresAt: number | null;
  readonly cachedAt: number;
}

type Row = {
  id: string;
  user_id: number;
  kind: 'login' | 'personal';
  expires_at: Date | null;
  revoked_at: Date | null;
  username: string;
  email: string;
  is_staff: boolean;
};

/** One use of an access token, as recorded (an AccessTokenUsed event on the command side). */
export interface TokenUse {
  readonly tokenId: string;
  readonly userId: number;
  /** ISO 8601. */
  readonly usedAt: string;
}

/** The port through which the authenticator records token uses; the platform wires it to the event store. */
export type RecordTokenUse = (use: TokenUse) => Promise<void>;

/** Beyond this many tokens seen within one record interval, the oldest are forgotten (an extra event, no harm). */
const MAX_TRACKED_USES = 50_000;

export interface TokenAuthenticatorOptions {
  readonly pool: Pool;
  /** Asked for its newest position only: an unknown token may be one the read models have not seen yet. */
  readonly store: Pick<EventStore, 'headPosition' | 'newestPosition'>;
  readonly recordUse: RecordTokenUse;
  readonly progress?: ProjectionProgress;
  readonly logger?: Logger;
  /** A revoked token must fail everywhere within one second: cached answers live shorter than that. */
  readonly cacheTtlMs?: number;
  readonly now?: () => number;
  /**
   * An unknown token while the read models lag behind the event store may be one just issued (a
   * login answered after its read-your-writes wait timed out, on a loaded machine): the lookup
   * waits this long for them to catch up, then asks again. Default 5000.
   */
  readonly lagWaitMs?: number;
}

/**
 * `Authorization: Token <t>` and `Bearer <t>` both accept both kinds of token. Lookups go to the
 * access_tokens read model by SHA-256 of the secret; positive answers are cached briefly and dropped
 * as soon as the projector reports the token or its user changed (so a revocation is effective at
 * once in this process, and within the TTL everywhere else).
 */
export class TokenAuthenticator implements Authenticator {
  private readonly cache = new Map<string, CachedToken>();
  /** Lookups in flight, by token hash. */
  private readonly loading = new Map<string, Promise<CachedToken>>();
  /** Bumped by every invalidation: a lookup begun before one is not kept. */
  private generation = 0;
  /** When each token's use was last recorded, in recording order; only entries younger than the interval. */
  private readonly lastRecordedUse = new Map<string, number>();
  private readonly ttl: number;
  private readonly now: () => number;

  constructor(private readonly options: TokenAuthenticatorOptions) {
    this.ttl = options.cacheTtlMs ?? 500;
    this.now = options.now ?? Date.now;
    options.progress?.onChange((keys) => this.invalidate(keys));
  }

  async authenticate(header: string | undefined): Promise<Principal | undefined> {
    if (header === undefined || header === '') return undefined;
    const match = /^(Token|Bearer)\s+(\S+)\s*$/i.exec(header);
    if (!match)
      throw new AuthenticationError('Invalid token header. Use "Token <token>" or "Bearer <token>".');
    const secret = match[2]!;
    if (!looksLikeTokenSecret(secret)) throw new AuthenticationError('Invalid token.');
    const hash = hashTokenSecret(secret);
    const now = this.now();
    let entry = this.cache.get(hash);
    if (!entry || now - entry.cachedAt > this.ttl) entry = await this.refresh(hash, now);
    else if (now - entry.cachedAt > this.ttl / 2)
      // Refreshed ahead, in the background: a busy token's requests do not wait for its lookup at
      // each expiry, and no entry older than the TTL is ever served.
      this.refresh(hash, now).catch(() => undefined);
    if (entry.expiresAt !== null && entry.expiresAt <= now)
      throw new AuthenticationError('Token has expired.');
    this.recordUse(entry.principal, now);
    return entry.principal;
  }

  /** Tokens whose last recorded use is still inside the record interval (bounded memory). */
  get trackedTokenUses(): number {
    return this.lastRecordedUse.size;
  }

  /**
   * One lookup per token at a time, shared by the requests that need it. A lookup that overlapped
   * an invalidation answers its callers but is not kept (it may have read the row before the
   * change); one that finds the token gone or revoked drops what was kept.
   */
  private refresh(hash: string, now: number): Promise<CachedToken> {
    const pending = this.loading.get(hash);
    if (pending) return pending;
    const generation = this.generation;
    const loaded = this.load(hash, now)
      .then(
        (entry) => {
          if (generation === this.generation) this.cache.set(hash, entry);
          return entry;
        },
        (error: unknown) => {
          if (error instanceof AuthenticationError) this.cache.delete(hash);
          throw error;
        },
      )
      .finally(() => this.loading.delete(hash));
    this.loading.set(hash, loaded);
    return loaded;
  }

  /** Drops cached tokens named by projector change keys ("token:<id>", "user:<id>", or "*"). */
  invalidate(keys: readonly string[]): void {
    this.generation++;
    if (keys.includes('*')) return this.cache.clear();
    const wanted = new Set(keys);
    for (const [hash, entry] of this.cache) {
      if (wanted.has(`token:${entry.principal.tokenId}`) || wanted.has(`user:${entry.principal.userId}`))
        this.cache.delete(hash);
    }
  }

  private async load(hash: string, now: number): Promise<CachedToken> {
    const row = (await this.lookUp(hash)) ?? ((await this.caughtUp()) ? await this.lookUp(hash) : undefined);
    if (!row || row.revoked_at !== null) throw new AuthenticationError('Invalid token.');
    if (this.cache.size > 50_000) this.cache.clear();
    return {
      principal: {
        userId: row.user_id,
        username: row.username,
        email: row.email,
        isStaff: row.is_staff,
        tokenId: row.id,
        tokenKind: row.kind,
      },
      expiresAt: row.expires_at ? row.expires_at.getTime() : null,
      cachedAt: now,
    };
  }

  private async lookUp(hash: string): Promise<Row | undefined> {
    const { rows } = await this.options.pool.query<Row>(
      `SELECT t.id, t.user_id, t.kind, t.expires_at, t.revoked_at, u.username, u.email, u.is_staff
         FROM access_tokens t JOIN users u ON u.id = t.user_id
        WHERE t.token_hash = $1`,
      [hash],
    );
    return rows[0];
  }

  /** True when the read models were behind the event store's head and have caught up with it since. */
  private async caughtUp(): Promise<boolean> {
    const { progress, store } = this.options;
    if (!progress) return false;
    // The newest committed event, held back from readAll for a moment or not (another transaction
    // still open on the server): a token issued just now may be in one held back.
    const head = await (store.newestPosition ? store.newestPosition() : store.headPosition());
    if (comparePositions(head, progress.position) <= 0) return false;
    return progress.waitFor(head, this.options.lagWaitMs ?? 5000);
  }

  /** last_used_at may lag by up to a minute (decisions.md): one AccessTokenUsed event per token per minute. */
  private recordUse(principal: Principal, now: number): void {
    this.forgetUsesRecordedBefore(now - TOKEN_USE_RECORD_INTERVAL_MS);
    const last = this.lastRecordedUse.get(principal.tokenId);
    if (last !== undefined && now - last < TOKEN_USE_RECORD_INTERVAL_MS) return;
    this.lastRecordedUse.delete(principal.tokenId); // re-added at the end: the map stays in recording order
    this.lastRecordedUse.set(principal.tokenId, now);
    if (this.lastRecordedUse.size > MAX_TRACKED_USES)
      this.lastRecordedUse.delete(this.lastRecordedUse.keys().next().value!);
    this.options
      .recordUse({
        tokenId: principal.tokenId,
        userId: principal.userId,
        usedAt: new Date(now).toISOString(),
      })
      .catch((error: unknown) => {
        this.lastRecordedUse.delete(principal.tokenId);
        this.options.logger?.error('could not record token use', { error: String(error) });
      });
  }

  /** An entry that old would not suppress a record any more: drop it. Oldest entries come first. */
  private forgetUsesRecordedBefore(cutoff: number): void {
    for (const [tokenId, recordedAt] of this.lastRecordedUse) {
      if (recordedAt > cutoff) return;
      this.lastRecordedUse.delete(tokenId);
    }
  }
}
