import { Client } from 'pg';
import { waitFor } from '#tests/support/waitFor';
import { abortableSleep, randomBetween } from './abortableSleep';

/** Which of a database's connections to cut: every one, or only those waiting on LISTEN. */
export type Backends = 'all' | 'listen';

const WHERE: Record<Backends, string> = {
  all: '',
  // A LISTEN connection sits idle after its LISTEN: that is its last (current) query.
  listen: `AND query LIKE 'LISTEN%'`,
};

/**
 * Cuts database connections from the server side (pg_terminate_backend), as a failover, a
 * restarted pooler or an administrator would. Works from its own connection to another database.
 */
export class BackendTerminator {
  /** Terminated backends can linger in pg_stat_activity while they exit: never count them again. */
  private readonly terminated = new Set<number>();

  private constructor(
    private readonly admin: Client,
    private readonly database: string,
  ) {}

  /** `adminUrl`: any database of the same server but the victim's; `databaseUrl`: the victim. */
  static async connect(adminUrl: string, databaseUrl: string): Promise<BackendTerminator> {
    const admin = new Client({ connectionString: adminUrl });
    await admin.connect();
    return new BackendTerminator(admin, new URL(databaseUrl).pathname.slice(1));
  }

  /** Terminates the matching client connections of the database; returns how many went. */
  async terminate(which: Backends): Promise<number> {
    const { rows } = await this.admin.query<{ pid: number; ok: boolean }>(
      `SELECT pid, pg_terminate_backend(pid) AS ok FROM pg_stat_activity ${this.where(which)}`,
      [this.database, [...this.terminated]],
    );
    const pids = rows.filter((r) => r.ok).map((r) => r.pid);
    for (const pid of pids) this.terminated.add(pid);
    return pids.length;
  }

  /** Matching connections, not counting any this terminator has terminated. */
  async count(which: Backends): Promise<number> {
    const { rows } = await this.admin.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity ${this.where(which)}`,
      [this.database, [...this.terminated]],
    );
    return rows[0]?.n ?? 0;
  }

  /** Polls until at least `atLeast` new matching connections exist; false if not within timeoutMs. */
  async waitForCount(which: Backends, atLeast: number, timeoutMs: number): Promise<boolean> {
    return waitFor(`${atLeast} ${which} connections`, () => this.count(which), {
      timeoutMs,
      intervalMs: 100,
      until: (count) => count >= atLeast,
    }).then(
      () => true,
      () => false,
    );
  }

  /**
   * `rounds` times, after a random pause of `minDelayMs`..`maxDelayMs`, terminates the matching
   * connections. `beforeRound` may wait for a condition (e.g. the listeners being back). Returns
   * how many connections each round terminated.
   */
  async terminateAtRandomMoments(
    which: Backends,
    options: { rounds: number; minDelayMs: number; maxDelayMs: number; beforeRound?: () => Promise<void> },
  ): Promise<number[]> {
    const terminated: number[] = [];
    for (let round = 0; round < options.rounds; round++) {
      await options.beforeRound?.();
      await abortableSleep(randomBetween(options.minDelayMs, options.maxDelayMs));
      terminated.push(await this.terminate(which));
    }
    return terminated;
  }

  async close(): Promise<void> {
    await this.admin.end();
  }

  private where(which: Backends): string {
    return `WHERE datname = $1 AND pid <> pg_backend_pid() AND pid <> ALL($2::int[])
              AND backend_type = 'client backend' ${WHERE[which]}`;
  }
}
