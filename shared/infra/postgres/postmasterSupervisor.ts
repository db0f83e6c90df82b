import { describeExit, type Postmaster, type PostmasterExit } from './postmaster';
import { RestartPolicy, type RestartPolicyOptions } from './restartPolicy';

/**
 * - running: the server accepts connections.
 * - restarting: it died unexpectedly; we are waiting to restart it, or restarting it.
 * - failed: it kept failing; we gave up (onGiveUp was called).
 * - stopped: not started yet, or stopped on purpose.
 */
export type PostgresState = 'running' | 'restarting' | 'failed' | 'stopped';

export interface SupervisorLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export interface PostmasterSupervisorOptions {
  /** Starts one postmaster; resolves once it accepts connections. */
  readonly start: () => Promise<Postmaster>;
  readonly policy?: RestartPolicyOptions;
  readonly logger?: SupervisorLogger;
  /** Called once, after the last failed attempt, with the reason. */
  readonly onGiveUp?: (error: Error) => void;
  readonly now?: () => number;
}

/**
 * Keeps a postmaster running: when it dies without being asked to, it is restarted after a
 * growing delay, until the restart policy gives up. One log line when an outage starts, one when
 * it ends (or when we give up); the attempts in between are silent.
 */
export class PostmasterSupervisor {
  private current: Postmaster | undefined;
  private stateValue: PostgresState = 'stopped';
  private stopping = false;
  private recovering: Promise<void> | undefined;
  private readonly cancelWait = new AbortController();
  private readonly policy: RestartPolicy;
  private readonly now: () => number;

  constructor(private readonly options: PostmasterSupervisorOptions) {
    this.policy = new RestartPolicy(options.policy);
    this.now = options.now ?? Date.now;
  }

  /** The first start: a failure here is the caller's to handle (nothing was running before). */
  async start(): Promise<void> {
    this.adopt(await this.options.start());
  }

  state(): PostgresState {
    return this.stateValue;
  }

  /** The current postmaster's process id, while there is one. */
  pid(): number | undefined {
    return this.current?.pid;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.cancelWait.abort();
    await this.recovering;
    await this.current?.stop();
    this.current = undefined;
    this.stateValue = 'stopped';
  }

  private adopt(postmaster: Postmaster): void {
    this.current = postmaster;
    this.stateValue = 'running';
    void postmaster.exited.then((exit) => {
      if (this.stopping || this.current !== postmaster) return;
      this.current = undefined;
      this.recovering = this.recover(postmaster.pid, exit);
    });
  }

  private async recover(pid: number, exit: PostmasterExit): Promise<void> {
    this.stateValue = 'restarting';
    const since = this.now();
    this.options.logger?.error('embedded PostgreSQL exited unexpectedly; restarting it', {
      pid,
      exit: describeExit(exit),
    });
    let attempts = 0;
    let lastFailure = describeExit(exit);
    for (;;) {
      const wait = this.policy.failure(this.now());
      if (wait === undefined) return this.giveUp(attempts, lastFailure);
      await sleep(wait, this.cancelWait.signal);
      if (this.stopping) return;
      attempts += 1;
      try {
        const postmaster = await this.options.start();
        if (this.stopping) return void (await postmaster.stop());
        this.adopt(postmaster);
        this.options.logger?.info('embedded PostgreSQL is back', {
          pid: postmaster.pid,
          attempts,
          downtimeMs: this.now() - since,
        });
        return;
      } catch (error) {
        lastFailure = error instanceof Error ? error.message : String(error);
      }
    }
  }

  private giveUp(attempts: number, lastFailure: string): void {
    this.stateValue = 'failed';
    const failures = this.policy.recentFailures(this.now());
    const error = new Error(
      `embedded PostgreSQL failed ${failures} times within ${this.policy.windowMs / 1000} s ` +
        `(${attempts} restart attempts); last failure: ${lastFailure}`,
    );
    this.options.logger?.error('embedded PostgreSQL could not be restarted; giving up', {
      failures,
      attempts,
      lastFailure,
    });
    this.options.onGiveUp?.(error);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
