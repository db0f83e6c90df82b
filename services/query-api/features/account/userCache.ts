import type { Pool } from 'pg';
import type { ProjectionProgress } from '../../../../shared/projections/projectionProgress';
import type { UserRecord } from '../../../../shared/views/userViews';
import { loadUser } from './loadUser';

type CachedUser = UserRecord & { revision: bigint };

/**
 * Users as the read model has them, kept in memory. The projector reports every user it changes
 * ("user:<id>") before a write's response is released, so a cached row is dropped before its
 * writer can read again; the TTL only bounds what a missed cross-process notification could cost.
 */
export class UserCache {
  private readonly entries = new Map<number, { user: CachedUser; loadedAt: number }>();
  /** Bumped by every invalidation: a load that started before one must not be cached. */
  private generation = 0;

  constructor(
    private readonly pool: Pool,
    progress: ProjectionProgress | undefined,
    private readonly ttlMs = 10_000,
    private readonly maxEntries = 100_000,
  ) {
    progress?.onChange((keys) => this.invalidate(keys));
  }

  async get(userId: number): Promise<CachedUser> {
    const now = Date.now();
    const hit = this.entries.get(userId);
    if (hit && now - hit.loadedAt < this.ttlMs) return hit.user;
    const generation = this.generation;
    const user = await loadUser(this.pool, userId);
    if (generation === this.generation) {
      if (this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(userId, { user, loadedAt: now });
    }
    return user;
  }

  invalidate(keys: readonly string[]): void {
    this.generation++;
    if (keys.includes('*')) return this.entries.clear();
    for (const key of keys) if (key.startsWith('user:')) this.entries.delete(Number(key.slice(5)));
  }
}
