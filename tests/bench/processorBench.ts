import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { createLocalDiskBlobStore } from '#shared/blobStore/localDisk/createLocalDiskBlobStore';
import { systemContext } from '#shared/commandHandling/commandContext';
import { handleCommand } from '#shared/commandHandling/handleCommand';
import { decideUpload } from '#shared/domain/uploads/decide';
import { uploadDecider, uploadStreamName } from '#shared/domain/uploads/events';
import { createPostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import type { BenchPostgres } from './benchPostgres';
import { benchAccount, startBenchService } from './benchService';
import type { Cleanup } from './cleanup';
import { type Figure, milliseconds, percent } from './figure';
import { checked, generateLoad, stopLoadGenerators } from './loadGenerator';
import { printDetail, printFigure, printSection } from './report';

const ME = '/api/auth/me/';

export interface ProcessorBenchPlan {
  readonly rounds: number;
  readonly connections: number;
  readonly durationSeconds: number;
  /** Edge of the generated gzipped NIfTI volume (float32, edge³ voxels). */
  readonly volumeEdge: number;
}

/**
 * "API p99 while the processor works": p99 of an authenticated GET /api/auth/me/ on the all-in-one
 * with no upload pending, then while its processor works through gzipped NIfTI volumes (metadata and
 * a three-view preview each, in worker threads), alternating per round. Target: p99 not more than
 * doubled. Uploads are fed to the event store and blob store directly, so only processing loads
 * the server during the measurement.
 */
export async function measureApiWhileProcessing(
  pgServer: BenchPostgres,
  cleanup: Cleanup,
  plan: ProcessorBenchPlan,
): Promise<Figure[]> {
  printSection(
    `API p99 while the processor works: GET ${ME}, ${plan.connections} connections × ${plan.durationSeconds} s, idle vs processing ${plan.volumeEdge}³ float32 .nii.gz volumes, ${plan.rounds} rounds`,
  );
  cleanup.defer('load generators', stopLoadGenerators);
  const databaseUrl = await pgServer.createDatabase('bench_processor');
  const dataDir = path.join(pgServer.scratchDir, 'processor');
  const service = await startBenchService(databaseUrl, dataDir, { processor: true });
  const closeService = cleanup.defer('all-in-one', () => service.close());
  const feeder = new UploadFeeder(databaseUrl, dataDir, niftiVolume(plan.volumeEdge));
  const closeFeeder = cleanup.defer('upload feeder', () => feeder.close());
  const { token } = await benchAccount(service.url);
  const target = { url: `${service.url}${ME}`, headers: { authorization: `Token ${token}` } };
  const run = (durationSeconds: number) =>
    generateLoad({ ...target, connections: plan.connections, durationSeconds }).then(checked);

  await run(2); // warm-up
  const first = await feeder.timeOne();
  const perUpload = await feeder.timeOne();
  printDetail(
    `one upload processed in ${perUpload.toFixed(2)} s (metadata and preview; the first, which started a worker, ${first.toFixed(2)} s)`,
  );
  const idle: number[] = [];
  const busy: number[] = [];
  for (let i = 0; i < plan.rounds; i++) {
    await feeder.waitUntilIdle();
    const quiet = await run(plan.durationSeconds);
    // Enough work to outlast the run, whatever the concurrency (checked after it).
    const batch = Math.ceil(((plan.durationSeconds + 2) / perUpload) * 2) + 2;
    await feeder.feed(batch);
    await feeder.waitUntilProcessing();
    const loaded = await run(plan.durationSeconds);
    const left = await feeder.unfinished();
    idle.push(quiet.latencyP99Ms);
    busy.push(loaded.latencyP99Ms);
    printDetail(
      `round ${i + 1}: idle p99 ${quiet.latencyP99Ms} ms (${quiet.requestsPerSecond.toFixed(0)} req/s); processing p99 ${loaded.latencyP99Ms} ms (${loaded.requestsPerSecond.toFixed(0)} req/s), ${batch} uploads fed, ${left} still unfinished when the run ended${left === 0 ? ' (the processor ran dry: the figure understates the load)' : ''}`,
    );
  }
  await feeder.waitUntilIdle();
  await closeFeeder();
  await closeService();
  const figures: Figure[] = [
    { name: `GET ${ME} p99, processor idle`, rounds: idle, unit: milliseconds, target: undefined },
    { name: `GET ${ME} p99, processor working`, rounds: busy, unit: milliseconds, target: undefined },
    {
      name: 'API p99 processing / idle',
      rounds: busy.map((b, i) => b / Math.max(idle[i]!, 1)),
      unit: percent,
      target: { kind: 'at most', value: 2 },
    },
  ];
  figures.forEach(printFigure);
  return figures;
}

/** A gzipped NIfTI-1 volume of float32 voxels: a smooth ramp with a bright cube in the middle. */
function niftiVolume(edge: number): Buffer {
  const header = Buffer.alloc(352);
  header.writeInt32LE(348, 0);
  [3, edge, edge, edge, 1, 1, 1, 1].forEach((d, i) => header.writeInt16LE(d, 40 + 2 * i));
  header.writeInt16LE(16, 70); // float32
  header.writeInt16LE(32, 72);
  [1, 1, 1, 1].forEach((p, i) => header.writeFloatLE(p, 76 + 4 * i));
  header.writeFloatLE(352, 108);
  header.writeFloatLE(1, 112); // scl_slope
  header.writeUInt8(10, 123); // xyzt_units: mm, s
  header.write('n+1\0', 344, 'latin1');
  const voxels = Buffer.alloc(edge ** 3 * 4);
  const third = edge / 3;
  for (let z = 0, i = 0; z < edge; z++)
    for (let y = 0; y < edge; y++)
      for (let x = 0; x < edge; x++, i++) {
        const inCube = [x, y, z].every((c) => c >= third && c < 2 * third);
        voxels.writeFloatLE(inCube ? 1000 : x + y + z + ((i * 7919) % 13), i * 4);
      }
  return gzipSync(Buffer.concat([header, voxels]));
}

/** Appends uploads as the upload route would (bytes first, then UploadReceived) and watches them. */
class UploadFeeder {
  private readonly store;
  private readonly pool: pg.Pool;
  private readonly blobs;
  private readonly fed: string[] = [];

  constructor(
    databaseUrl: string,
    dataDir: string,
    private readonly bytes: Buffer,
  ) {
    this.store = createPostgresEventStore({ connectionString: databaseUrl, poolSize: 2 });
    this.pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    this.blobs = createLocalDiskBlobStore({ rootDir: path.join(dataDir, 'blobs') });
  }

  async feed(count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const uploadId = randomUUID();
      const blobKey = `uploads/${uploadId}.nii.gz`;
      const stored = await this.blobs.put(blobKey, Readable.from([this.bytes]));
      const data = {
        uploadId,
        name: 'volume.nii.gz',
        filename: 'volume.nii.gz',
        sizeBytes: stored.size,
        sha256: stored.sha256,
        mimeType: 'application/gzip',
        blobKey,
        uploaderId: 1,
        associatedBrainId: null,
        receivedAt: new Date().toISOString(),
      };
      await handleCommand(
        this.store,
        uploadStreamName(uploadId),
        uploadDecider,
        (state) => decideUpload({ type: 'ReceiveUpload', data }, state),
        systemContext('bench'),
      );
      this.fed.push(uploadId);
    }
  }

  /** Seconds to process one upload on an otherwise idle service. */
  async timeOne(): Promise<number> {
    const started = Date.now();
    await this.feed(1);
    await this.waitUntilIdle();
    const { rows } = await this.pool.query<{ status: string }>('SELECT status FROM file_uploads');
    if (rows.some((r) => r.status !== 'completed'))
      throw new Error(`the benchmark volume did not process: ${JSON.stringify(rows)}`);
    return (Date.now() - started) / 1000;
  }

  async unfinished(): Promise<number> {
    // One statement, so both counts come from one snapshot: counted apart, an upload the read model
    // gained between them was neither unfinished nor missing, and a run once stopped waiting early.
    const { rows } = await this.pool.query<{ unfinished: string; known: string }>(
      `SELECT count(*) FILTER (WHERE status IN ('uploaded', 'processing')) AS unfinished, count(*) AS known
         FROM file_uploads`,
    );
    // Fed but not yet in the read model count too.
    return Number(rows[0]!.unfinished) + this.fed.length - Number(rows[0]!.known);
  }

  waitUntilIdle(): Promise<void> {
    return this.waitFor(async () => (await this.unfinished()) === 0, 'every upload to finish');
  }

  waitUntilProcessing(): Promise<void> {
    return this.waitFor(async () => {
      const { rows } = await this.pool.query(
        `SELECT 1 FROM file_uploads WHERE status = 'processing' LIMIT 1`,
      );
      return rows.length > 0;
    }, 'processing to start');
  }

  private async waitFor(condition: () => Promise<boolean>, what: string): Promise<void> {
    const deadline = Date.now() + 600_000;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async close(): Promise<void> {
    await this.store.close();
    await this.pool.end();
  }
}
