import { Gauge, type Registry } from 'prom-client';

/** What the ledger gauges show, read from the database at scrape time. */
export interface LedgerReadings {
  /** Events chained (the ledger head's count). */
  readonly headSeq: number;
  /** Events readable in the store and not chained yet; undefined when unknown (EventStoreDB). */
  readonly lagEvents: number | undefined;
  /** The latest verify-ledger run, undefined when none was ever recorded. */
  readonly lastVerification: { readonly ok: boolean; readonly finishedAt: Date } | undefined;
}

/** Readings taken within this long serve every gauge of one scrape. */
const READING_REUSE_MS = 1000;

/**
 * The ledger's gauges (issue 18): head, lag, and the last verification. Each scrape reads them once
 * (`read`); a failed read keeps the previous values, so /metrics/ answers during a database outage.
 * Alert on `ledger_lag_events` that stays above zero (`min_over_time(ledger_lag_events[10m]) > 0`:
 * the ledger stopped following the store), on `ledger_verification_last_success == 0`, and on
 * `time() - ledger_verification_last_run_timestamp_seconds` beyond the verification schedule.
 */
export function registerLedgerMetrics(registry: Registry, read: () => Promise<LedgerReadings>): void {
  let latest: { at: number; readings: Promise<LedgerReadings | undefined> } | undefined;
  const readings = (): Promise<LedgerReadings | undefined> => {
    const now = Date.now();
    if (!latest || now - latest.at > READING_REUSE_MS)
      latest = { at: now, readings: read().catch(() => undefined) };
    return latest.readings;
  };
  const gauge = (name: string, help: string, value: (r: LedgerReadings) => number | undefined): void => {
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const r = await readings();
        const v = r && value(r);
        if (v !== undefined) this.set(v);
      },
    });
  };
  gauge('ledger_head_seq', 'Events chained in the tamper-evident ledger (its head count).', (r) => r.headSeq);
  gauge(
    'ledger_lag_events',
    'Events readable in the event store that the ledger has not chained yet.',
    (r) => r.lagEvents,
  );
  gauge(
    'ledger_verification_last_success',
    '1 when the latest verify-ledger run found the chain intact, 0 when it failed or none was recorded.',
    (r) => (r.lastVerification?.ok ? 1 : 0),
  );
  gauge(
    'ledger_verification_last_run_timestamp_seconds',
    'When the latest verify-ledger run finished (Unix seconds; 0 when none was recorded).',
    (r) => (r.lastVerification ? r.lastVerification.finishedAt.getTime() / 1000 : 0),
  );
}
