import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import pg from 'pg';
import type { ProcessorConfig } from '#shared/config/config';
import { handleCommand, toNewEvents } from '#shared/commandHandling/handleCommand';
import { systemContext } from '#shared/commandHandling/commandContext';
import { type UploadCommand, decideUpload } from '#shared/domain/uploads/decide';
import { type UploadEvent, uploadDecider, uploadStreamName } from '#shared/domain/uploads/events';
import type { BlobStore } from '#shared/blobStore/blobStore';
import { createLocalDiskBlobStore } from '#shared/blobStore/localDisk/createLocalDiskBlobStore';
import type { EventStore, RecordedEvent } from '#shared/eventStore/eventStore';
import {
  type PostgresEventStore,
  createPostgresEventStore,
} from '#shared/eventStore/postgres/postgresEventStore';
import { createLogger } from '#shared/logging/logger';
import { type Metrics, createMetrics } from '#shared/metrics/metrics';
import { type RunningProcessor, startProcessor } from '#services/processor/startProcessor';
import { inspectionTimeLimitSeconds } from '#services/processor/timeLimit';
import { workerInspector } from '#services/processor/workerInspector';
import { freePort } from '#tests/support/freePort';
import { type ServiceProcess, spawnService } from '#tests/support/spawnService';
import { createTestDatabase } from '#tests/support/testPostgres';
import { waitFor } from '#tests/support/waitFor';

export const TEST_INSPECTOR = path.join(__dirname, 'testInspector.ts');

export const testProcessorConfig = (overrides: Partial<ProcessorConfig> = {}): ProcessorConfig => ({
  enabled: true,
  leaseSeconds: 30,
  concurrency: 2,
  smallUploadSlots: 1,
  smallUploadMaxBytes: 1024 * 1024,
  timeoutSeconds: 60,
  timeoutBaseSeconds: 60,
  timeoutPerGibSeconds: 0,
  maxAttempts: 3,
  workerMemoryMb: 256,
  workerNice: 10,
  inspectorModule: TEST_INSPECTOR,
  ...overrides,
});

/** A database with the event store, a local-disk blob store and helpers to feed and watch uploads. */
export class ProcessorFixture {
  readonly logLines: string[] = [];
  private readonly processors: RunningProcessor[] = [];
  private readonly children: ServiceProcess[] = [];

  private constructor(
    readonly databaseUrl: string,
    readonly store: PostgresEventStore,
    readonly pool: pg.Pool,
    readonly dataDir: string,
    readonly blobs: BlobStore,
  ) {}

  static async create(): Promise<ProcessorFixture> {
    const databaseUrl = await createTestDatabase('processor');
    const store = createPostgresEventStore({ connectionString: databaseUrl });
    await store.migrate();
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
    const dataDir = mkdtempSync(path.join(tmpdir(), 'processor-test-'));
    const blobs = createLocalDiskBlobStore({ rootDir: path.join(dataDir, 'blobs') });
    return new ProcessorFixture(databaseUrl, store, pool, dataDir, blobs);
  }

  /** Stores the bytes and appends UploadReceived, as the upload route does; resolves with the id. */
  async receive(
    filename: string,
    content: Buffer | string = `bytes of ${filename}`,
    uploaderId = 7,
  ): Promise<string> {
    const uploadId = randomUUID();
    const blobKey = `uploads/${uploadId}.nii`;
    const stored = await this.blobs.put(blobKey, Readable.from([Buffer.from(content)]));
    await this.handle(uploadId, {
      type: 'ReceiveUpload',
      data: {
        uploadId,
        name: filename,
        filename,
        sizeBytes: stored.size,
        sha256: stored.sha256,
        mimeType: 'application/octet-stream',
        blobKey,
        uploaderId,
        associatedBrainId: null,
        receivedAt: new Date().toISOString(),
      },
    });
    return uploadId;
  }

  async remove(uploadId: string): Promise<void> {
    await this.handle(uploadId, {
      type: 'DeleteUpload',
      data: { reason: 'brain_deleted', actor: { userId: 7, isStaff: false }, now: new Date().toISOString() },
    });
  }

  /**
   * Appends UploadProcessingStarted as a processor that claimed the upload would, its lease ending
   * `leaseMs` from now: a processor that then died, its claim never renewed.
   */
  async claimedBy(
    uploadId: string,
    claim: { attempt: number; processorId: string; leaseMs: number },
    expectedRevision: bigint,
  ): Promise<void> {
    const now = new Date();
    const data = {
      uploadId,
      attempt: claim.attempt,
      processorId: claim.processorId,
      leaseUntil: new Date(now.getTime() + claim.leaseMs).toISOString(),
      startedAt: now.toISOString(),
    };
    await this.store.appendToStream(
      uploadStreamName(uploadId),
      toNewEvents([{ type: 'UploadProcessingStarted', data }], systemContext('test')),
      { expectedRevision },
    );
  }

  private async handle(uploadId: string, command: UploadCommand): Promise<void> {
    await handleCommand(
      this.store,
      uploadStreamName(uploadId),
      uploadDecider,
      (state) => decideUpload(command, state),
      systemContext('test'),
    );
  }

  startProcessor(
    overrides: Partial<ProcessorConfig> = {},
    options: { processorId?: string; metrics?: Metrics; store?: EventStore } = {},
  ): RunningProcessor {
    const config = testProcessorConfig(overrides);
    const processor = startProcessor({
      store: options.store ?? this.store,
      pool: this.pool,
      blobs: this.blobs,
      inspector: workerInspector({
        blobs: { kind: 'local', rootDir: path.join(this.dataDir, 'blobs') },
        inspectorModule: config.inspectorModule,
        timeLimitMs: (job) => inspectionTimeLimitSeconds(config, job.sizeBytes) * 1000,
        memoryMb: config.workerMemoryMb,
        nice: config.workerNice,
      }),
      config,
      logger: createLogger({
        service: 'processor-test',
        level: 'info',
        sink: (line) => this.logLines.push(line),
      }),
      metrics: options.metrics ?? createMetrics('processor-test'),
      processorId: options.processorId,
      backoff: { initialMs: 50, maxMs: 500 },
    });
    this.processors.push(processor);
    return processor;
  }

  /** The real processor process (services/processor/main.ts) on this database and these blobs. */
  async spawnProcessor(env: Readonly<Record<string, string>>): Promise<ServiceProcess> {
    const child = await spawnService(
      'services/processor/main.ts',
      {
        HOST: '127.0.0.1',
        PORT: String(await freePort()),
        DATABASE_URL: this.databaseUrl,
        DATA_DIR: this.dataDir,
        LOG_LEVEL: 'warn',
        PROCESSOR_INSPECTOR_MODULE: TEST_INSPECTOR,
        ...env,
      },
      60_000,
    );
    this.children.push(child);
    return child;
  }

  async events(uploadId: string): Promise<RecordedEvent[]> {
    return this.store.readStream(uploadStreamName(uploadId));
  }

  async types(uploadId: string): Promise<string[]> {
    return (await this.events(uploadId)).map((e) => e.type);
  }

  /** Resolves once every upload's stream ends completed, failed or deleted (bounded). */
  async waitUntilFinished(uploadIds: readonly string[], timeoutMs = 60_000): Promise<void> {
    await waitFor(
      `uploads ${uploadIds.join(', ')} to finish`,
      async () => {
        for (const id of uploadIds) if (!isFinished(await this.events(id))) return false;
        return true;
      },
      { timeoutMs, intervalMs: 50 },
    );
  }

  async close(): Promise<void> {
    await Promise.all(this.children.splice(0).map((child) => child.kill()));
    await Promise.all(this.processors.map((p) => p.stop()));
    await this.store.close();
    await this.pool.end();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

const FINAL: ReadonlySet<UploadEvent['type']> = new Set([
  'UploadProcessingCompleted',
  'UploadProcessingFailed',
  'UploadDeleted',
]);

export const isFinished = (events: readonly RecordedEvent[]): boolean =>
  events.some((e) => FINAL.has(e.type as UploadEvent['type']));

/**
 * The processing history of one upload as the events tell it, checked for what must always hold:
 * attempts numbered 1, 2, … in order; each later attempt starting only once the lease of the one
 * before (as last renewed) had run out; at most one outcome, by the last attempt, and nothing
 * after it. Returns the number of attempts and the outcome's type.
 */
export function checkHistory(events: readonly RecordedEvent[]): {
  attempts: number;
  outcome: string | undefined;
} {
  let attempts = 0;
  let leaseUntil = 0;
  let outcome: string | undefined;
  for (const e of events) {
    const data = e.data as { attempt?: number; leaseUntil?: string; startedAt?: string };
    if (outcome !== undefined && e.type !== 'UploadDeleted')
      throw new Error(`${e.type} after the outcome ${outcome}`);
    switch (e.type) {
      case 'UploadProcessingStarted':
        if (data.attempt !== attempts + 1) throw new Error(`attempt ${data.attempt} after ${attempts}`);
        if (attempts > 0 && Date.parse(data.startedAt!) < leaseUntil)
          throw new Error(`attempt ${data.attempt} started while attempt ${attempts} held its lease`);
        attempts += 1;
        leaseUntil = Date.parse(data.leaseUntil!);
        break;
      case 'UploadProcessingLeaseRenewed':
        if (data.attempt !== attempts)
          throw new Error(`renewal by attempt ${data.attempt} during ${attempts}`);
        leaseUntil = Date.parse(data.leaseUntil!);
        break;
      case 'UploadProcessingCompleted':
      case 'UploadProcessingFailed':
        if (data.attempt !== attempts)
          throw new Error(`outcome by attempt ${data.attempt} during ${attempts}`);
        outcome = e.type;
        break;
    }
  }
  return { attempts, outcome };
}
