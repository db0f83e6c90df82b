import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { GlobalPosition } from '#shared/eventStore/eventStore';
import type { LoopMetrics } from '#shared/runtime/supervisedLoop';

/** The exposition format /metrics/ must announce (decisions.md "System"). */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Route label for requests that matched no route: raw paths would explode the label set. */
export const UNMATCHED_ROUTE = 'unmatched';

export type UploadOutcome = 'completed' | 'failed';

/** leftover: a temp file, incomplete multipart upload or stray sidecar; orphan: a blob no record names. */
export type BlobSweptKind = 'leftover' | 'orphan';

/**
 * The metrics of one process. Other code records through these helpers and never touches
 * prom-client; one Registry per createMetrics() call (the all-in-one shares one between its apps).
 */
export interface Metrics extends LoopMetrics {
  readonly registry: Registry;
  readonly contentType: string;
  /** `route` is the route template ('/api/tokens/{token_id}/') or UNMATCHED_ROUTE. */
  observeHttpRequest(method: string, route: string, status: number, seconds: number): void;
  eventsAppended(type: string, count?: number): void;
  /** Position as a number (the prepare part of a GlobalPosition: the global sequence). */
  setProjectionPosition(projection: string, position: GlobalPosition | bigint | number): void;
  /** Seconds between an event being recorded and the projection applying it. */
  setProjectionLag(projection: string, seconds: number): void;
  uploadProcessed(outcome: UploadOutcome, seconds?: number): void;
  /**
   * The processor's queue: uploads due and waiting for a slot by size (`small`: within the size the
   * small slots take), and uploads being processed by the kind of slot they run in.
   */
  setProcessingQueue(
    waiting: Readonly<Record<'small' | 'large', number>>,
    running: Readonly<Record<'small' | 'any', number>>,
  ): void;
  /** An inspection ran past its time limit (its upload failed). */
  uploadTimedOut(): void;
  /** Seconds the oldest upload due and waiting for a slot has waited since it was received (0: none waits). */
  setOldestWaitingUpload(seconds: number): void;
  /** A claim taken from a processor whose lease lapsed (it died or stalled), i.e. attempt 2 or later. */
  claimTakenOver(): void;
  /** A request refused by a rate limit (429), by bucket (login, register, tokenCreate, upload, default). */
  rateLimitRejected(bucket: string): void;
  /** A write answered from its Idempotency-Key record (a replay) instead of running again. */
  idempotencyReplayed(): void;
  /** Seconds one append to the event store took (committed or refused). */
  observeAppend(seconds: number): void;
  /** A read whose read-your-writes wait ran out before the read models reached the caller's position. */
  readYourWritesTimedOut(): void;
  /** Events the relay delivered to the integration bus (Kafka), by topic. */
  eventsPublished(topic: string, count: number): void;
  /** What a blob sweep removed: leftovers of killed writes, or orphaned blobs no record names. */
  blobsSwept(kind: BlobSweptKind, count: number, bytes: number): void;
  /** The text exposition of every metric. */
  render(): Promise<string>;
}

interface HttpSeries {
  readonly count: { inc(): void };
  readonly duration: { observe(value: number): void };
}

const HTTP_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const LAG_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300];
const APPEND_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const PROCESSING_BUCKETS = [0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 900];

/**
 * prom-client's default metrics include gauges named `nodejs_active_{handles,requests,resources}_total`,
 * which `promtool check metrics` rejects (only counters may end in `_total`). Each duplicates
 * `sum(nodejs_active_handles)` etc. of the per-type gauge it sits beside, so it is dropped.
 */
const NON_COUNTER_DEFAULT_TOTALS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

function removeNonCounterTotals(registry: Registry): void {
  for (const name of NON_COUNTER_DEFAULT_TOTALS) registry.removeSingleMetric(name);
}

function positionNumber(position: GlobalPosition | bigint | number): number {
  if (typeof position === 'number') return position;
  return Number(typeof position === 'bigint' ? position : position.prepare);
}

export function createMetrics(serviceName: string): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service: serviceName });
  collectDefaultMetrics({ register: registry });
  removeNonCounterTotals(registry);
  const registers = [registry];
  const loopUp = new Gauge({
    name: 'supervised_loop_up',
    help: '1 while a long-lived loop (projection runner, listener, flush) is working, 0 while it retries or is stopped.',
    labelNames: ['loop'] as const,
    registers,
  });
  const loopFailures = new Counter({
    name: 'supervised_loop_failures_total',
    help: 'Failures of a long-lived loop, each followed by a retry with backoff.',
    labelNames: ['loop'] as const,
    registers,
  });

  const httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration in seconds by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: HTTP_BUCKETS,
    registers,
  });
  const eventsAppended = new Counter({
    name: 'events_appended_total',
    help: 'Events appended to the event store by type.',
    labelNames: ['type'] as const,
    registers,
  });
  const projectionPosition = new Gauge({
    name: 'projection_position',
    help: 'Global position of the last event a projection applied.',
    labelNames: ['projection'] as const,
    registers,
  });
  const projectionLag = new Gauge({
    name: 'projection_lag_seconds',
    help: 'Seconds between an event being recorded and a projection applying it (latest).',
    labelNames: ['projection'] as const,
    registers,
  });
  // Not `projection_lag_seconds_histogram`: a type name inside a metric name fails promtool, and
  // the gauge above already owns `projection_lag_seconds`.
  const projectionBatchLag = new Histogram({
    name: 'projection_batch_lag_seconds',
    help: 'Projection lag in seconds, observed once per applied batch.',
    labelNames: ['projection'] as const,
    buckets: LAG_BUCKETS,
    registers,
  });
  const eventsPublished = new Counter({
    name: 'events_published_total',
    help: 'Events the relay delivered to the integration bus (Kafka), by topic.',
    labelNames: ['topic'] as const,
    registers,
  });
  const blobsSwept = new Counter({
    name: 'blob_sweep_removed_total',
    help: 'Removed by the blob sweep, by kind (leftover: of a killed write; orphan: a blob no record names).',
    labelNames: ['kind'] as const,
    registers,
  });
  const blobBytesSwept = new Counter({
    name: 'blob_sweep_removed_bytes_total',
    help: 'Bytes the blob sweep removed, by kind (leftover, orphan).',
    labelNames: ['kind'] as const,
    registers,
  });
  const uploadsProcessed = new Counter({
    name: 'upload_processing_total',
    help: 'Finished upload processing runs by outcome.',
    labelNames: ['outcome'] as const,
    registers,
  });
  const uploadDuration = new Histogram({
    name: 'upload_processing_duration_seconds',
    help: 'Upload processing duration in seconds by outcome.',
    labelNames: ['outcome'] as const,
    buckets: PROCESSING_BUCKETS,
    registers,
  });
  const uploadsWaiting = new Gauge({
    name: 'upload_processing_waiting',
    help: 'Uploads due and waiting for a processor slot, by size (small: within PROCESSOR_SMALL_UPLOAD_MB).',
    labelNames: ['size'] as const,
    registers,
  });
  const uploadsRunning = new Gauge({
    name: 'upload_processing_running',
    help: 'Uploads being processed, by the kind of slot (small: kept for small uploads; any).',
    labelNames: ['lane'] as const,
    registers,
  });
  const uploadTimeouts = new Counter({
    name: 'upload_processing_timeouts_total',
    help: 'Inspections stopped at their time limit (the upload failed).',
    registers,
  });

  const oldestWaiting = new Gauge({
    name: 'upload_processing_oldest_waiting_seconds',
    help: 'Seconds the oldest upload due and waiting for a processor slot has waited since it was received (0: none).',
    registers,
  });
  const claimsTakenOver = new Counter({
    name: 'upload_processing_claims_taken_over_total',
    help: 'Claims taken from a processor whose lease lapsed (it died or stalled).',
    registers,
  });
  const rateLimitRejections = new Counter({
    name: 'rate_limit_rejections_total',
    help: 'Requests refused with 429 by a rate limit, by bucket (login, register, tokenCreate, upload, default).',
    labelNames: ['bucket'] as const,
    registers,
  });
  const idempotencyReplays = new Counter({
    name: 'idempotency_replays_total',
    help: 'Writes answered from their Idempotency-Key record instead of running again.',
    registers,
  });
  const appendDuration = new Histogram({
    name: 'event_store_append_duration_seconds',
    help: 'Duration of one append to the event store in seconds (committed or refused).',
    buckets: APPEND_BUCKETS,
    registers,
  });
  const readYourWritesTimeouts = new Counter({
    name: 'read_your_writes_timeouts_total',
    help: "Reads whose read-your-writes wait ran out before the read models reached the caller's position.",
    registers,
  });

  // prom-client hashes the label set on every call; the set of (method, route, status) is small
  // and bounded (route templates only), so resolve each series once and keep it.
  const httpSeries = new Map<string, HttpSeries>();
  const seriesFor = (method: string, route: string, status: number): HttpSeries => {
    const key = `${method} ${status} ${route}`;
    let series = httpSeries.get(key);
    if (!series) {
      const labels = { method, route, status: String(status) };
      series = { count: httpRequests.labels(labels), duration: httpDuration.labels(labels) };
      httpSeries.set(key, series);
    }
    return series;
  };

  return {
    registry,
    contentType: METRICS_CONTENT_TYPE,
    observeHttpRequest(method, route, status, seconds) {
      const series = seriesFor(method, route, status);
      series.count.inc();
      series.duration.observe(seconds);
    },
    eventsAppended(type, count = 1) {
      eventsAppended.inc({ type }, count);
    },
    setProjectionPosition(projection, position) {
      projectionPosition.set({ projection }, positionNumber(position));
    },
    setProjectionLag(projection, seconds) {
      projectionLag.set({ projection }, seconds);
      projectionBatchLag.observe({ projection }, seconds);
    },
    uploadProcessed(outcome, seconds) {
      uploadsProcessed.inc({ outcome });
      if (seconds !== undefined) uploadDuration.observe({ outcome }, seconds);
    },
    setProcessingQueue(waiting, running) {
      for (const [size, count] of Object.entries(waiting)) uploadsWaiting.set({ size }, count);
      for (const [lane, count] of Object.entries(running)) uploadsRunning.set({ lane }, count);
    },
    uploadTimedOut() {
      uploadTimeouts.inc();
    },
    setOldestWaitingUpload(seconds) {
      oldestWaiting.set(Math.max(0, seconds));
    },
    claimTakenOver() {
      claimsTakenOver.inc();
    },
    rateLimitRejected(bucket) {
      rateLimitRejections.inc({ bucket });
    },
    idempotencyReplayed() {
      idempotencyReplays.inc();
    },
    observeAppend(seconds) {
      appendDuration.observe(seconds);
    },
    readYourWritesTimedOut() {
      readYourWritesTimeouts.inc();
    },
    eventsPublished(topic, count) {
      eventsPublished.inc({ topic }, count);
    },
    blobsSwept(kind, count, bytes) {
      blobsSwept.inc({ kind }, count);
      blobBytesSwept.inc({ kind }, bytes);
    },
    setLoopUp(loop, up) {
      loopUp.set({ loop }, up ? 1 : 0);
    },
    loopFailed(loop) {
      loopFailures.inc({ loop });
    },
    render: () => registry.metrics(),
  };
}
