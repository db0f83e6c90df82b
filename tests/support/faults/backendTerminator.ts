import { Client } from 'pg';
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
    const { rows } = await this.admin.query<{ n: number }>(
      `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
        WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend' ${WHERE[which]}`,
      [this.database],
    );
    return rows[0]?.n ?? 0;
  }

  async count(which: Backends): Promise<number> {
    const { rows } = await this.admin.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend' ${WHERE[which]}`,
      [this.database],
    );
    return rows[0]?.n ?? 0;
  }

  /** Polls until at least `atLeast` matching connections exist; false if they did not within timeoutMs. */
  async waitForCount(which: Backends, atLeast: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if ((await this.count(which)) >= atLeast) return true;
      await abortableSleep(100);
    }
    return false;
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
}
