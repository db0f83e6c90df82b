import type { Logger } from '#shared/logging/logger';

/**
 * One warning when transient faults start (blob store or database unavailable) and one info line
 * when work succeeds again, however many uploads and retries meet the same outage.
 */
export class FaultReporter {
  private since: number | undefined;
  private faults = 0;

  constructor(
    private readonly logger: Pick<Logger, 'warn' | 'info'>,
    private readonly now: () => number = Date.now,
  ) {}

  fault(what: string, error: unknown): void {
    this.faults += 1;
    if (this.since !== undefined) return;
    this.since = this.now();
    this.logger.warn('upload processing meets a fault; retrying with backoff', {
      during: what,
      error: error instanceof Error ? error.message : String(error),
    });
  }

  recovered(): void {
    if (this.since === undefined) return;
    this.logger.info('upload processing recovered', {
      outage_seconds: (this.now() - this.since) / 1000,
      faults: this.faults,
    });
    this.since = undefined;
    this.faults = 0;
  }
}
