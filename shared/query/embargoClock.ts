import type { Pool } from 'pg';
import type { GlobalPosition } from '#shared/eventStore/eventStore';
import type { ProjectionProgress } from '#shared/projections/projectionProgress';
import { ChangeAwareCache } from './changeAwareCache';

/**
 * When the next embargo ends (decisions.md: an embargo ends by itself at `embargo_until`, with no
 * write). Answers that apply the visibility rule are kept only until then (ChangeAwareCache's
 * `expiresAt`): from that instant every instance loads them again and the brain is in them.
 *
 * Read from the brains read model (a partial index of the embargoes not yet lifted) by the
 * database's clock, as the rule's SQL is, and kept until a brain changes or the time comes. If
 * this process's clock runs ahead of the database's, a reload at the end still finds the embargo
 * running and keeps the answer only until the same end, so it loads again until both agree.
 */
export class EmbargoClock {
  private readonly next: ChangeAwareCache<number>;

  constructor(
    private readonly pool: Pool,
    progress: ProjectionProgress,
  ) {
    this.next = new ChangeAwareCache<number>(progress, {
      dependsOn: (key) => key.startsWith('brain:'),
      maxEntries: 1,
      validUntil: (at) => at,
    });
  }

  /** The next end (ms since the epoch) after the database's now; Infinity when none is running. */
  nextEnd(now: GlobalPosition): Promise<number> {
    return this.next.get('next', now, async () => {
      const { rows } = await this.pool.query<{ at: string | null }>({
        name: 'embargo-next-end',
        text: `SELECT (extract(epoch FROM min(embargo_until)) * 1000)::text AS at
                 FROM brains WHERE visibility = 'embargoed' AND embargo_until > now()`,
      });
      const at = rows[0]?.at;
      return at === null || at === undefined ? Infinity : Number(at);
    });
  }
}
