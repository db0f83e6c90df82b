import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import pg from 'pg';
import type { BlobStore } from '#shared/blobStore/blobStore';
import { createLocalDiskBlobStore } from '#shared/blobStore/localDisk/createLocalDiskBlobStore';
import { sweepOnce, type BlobSweeperDeps } from '#shared/blobSweep/startBlobSweeper';
import type { BlobSweepTimings } from '#shared/blobSweep/sweepBlobStore';
import { handleCommand } from '#shared/commandHandling/handleCommand';
import { decideUpload } from '#shared/domain/uploads/decide';
import {
  type UploadState,
  uploadDecider,
  uploadPreviewKey,
  uploadStreamName,
} from '#shared/domain/uploads/events';
import type { EventStore } from '#shared/eventStore/eventStore';
import { createPostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import { createLogger } from '#shared/logging/logger';
import { createMetrics, type Metrics } from '#shared/metrics/metrics';
import { encodePng } from '#tests/media/imageEncoders';
import { finishProcessing, upload } from '#tests/e2e/uploads/uploadFixtures';
import { client, newUser, type Client } from '#tests/support/httpClient';
import { startTestService, type TestService } from '#tests/support/testService';
import { createTestDatabase } from '#tests/support/testPostgres';

/**
 * The sweep against the real read models of a running all-in-one (its own sweeper off), with the
 * sweep's clock moved forward instead of waiting for grace periods to pass.
 */
const HOUR = 3_600_000;
const TIMINGS: BlobSweepTimings = {
  leftoverGraceMs: HOUR,
  orphanGraceMs: 24 * HOUR,
  catchUpTimeoutMs: 20_000,
};
const LATER = 25 * HOUR;
const STAFF = { email: 'sweeper@example.org', password: 'sweeper-password' };

let service: TestService;
let api: Client;
let pool: pg.Pool;
let store: EventStore;
let blobs: BlobStore;
let metrics: Metrics;
let user: Awaited<ReturnType<typeof newUser>>;
let staff: string;

beforeAll(async () => {
  service = await startTestService({
    BLOB_SWEEP_ENABLED: 'false',
    PROCESSOR_ENABLED: 'false',
    ADMIN_EMAIL: STAFF.email,
    ADMIN_PASSWORD: STAFF.password,
  });
  api = client(service.url);
  pool = new pg.Pool({ connectionString: service.databaseUrl, max: 4 });
  store = createPostgresEventStore({ connectionString: service.databaseUrl, poolSize: 2 });
  blobs = createLocalDiskBlobStore({ rootDir: path.join(service.dataDir, 'blobs') });
  metrics = createMetrics('sweep-test');
  user = await newUser(api);
  staff = (await api.post('/api/auth/login/', { json: STAFF })).body.token as string;
}, 60_000);

afterAll(async () => {
  await store?.close();
  await pool?.end();
  await service?.close();
});

function deps(overrides: Partial<BlobSweeperDeps> = {}, offsetMs = 0): BlobSweeperDeps {
  return {
    blobs,
    pool,
    store,
    logger: createLogger({ service: 'sweep-test', level: 'silent' }),
    metrics,
    now: () => new Date(Date.now() + offsetMs),
    ...overrides,
  };
}

const sweepAt = (offsetMs: number, timings: Partial<BlobSweepTimings> = {}, overrides = {}) =>
  sweepOnce(deps(overrides, offsetMs), { ...TIMINGS, ...timings }, new AbortController().signal);

async function keys(of: BlobStore = blobs): Promise<string[]> {
  const all: string[] = [];
  for await (const blob of of.list()) all.push(blob.key);
  return all.sort();
}

async function leftoverIds(): Promise<string[]> {
  const all: string[] = [];
  for await (const leftover of blobs.listLeftovers()) all.push(leftover.id);
  return all.sort();
}

function form(field: string, name: string, bytes: Buffer, fields: Record<string, string> = {}): FormData {
  const data = new FormData();
  for (const [k, v] of Object.entries(fields)) data.append(k, v);
  data.append(field, new Blob([bytes], { type: 'image/png' }), name);
  return data;
}

/** A complete blob with its sidecar and no record: what a kill between a put and its event leaves. */
async function plantOrphan(key: string, size = 1000): Promise<{ key: string; size: number }> {
  await blobs.put(key, Readable.from([randomBytes(size)]), { contentType: 'application/octet-stream' });
  return { key, size };
}

/** What a put killed mid-way leaves: its temp file. */
async function plantTempFile(key: string, size: number): Promise<string> {
  const relative = `${key}~${randomBytes(8).toString('hex')}.tmp`;
  const file = path.join(service.dataDir, 'blobs', ...relative.split('/'));
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, randomBytes(size));
  return relative;
}

async function metricValue(name: string, kind: string): Promise<number> {
  const line = (await metrics.render())
    .split('\n')
    .find((l) => l.startsWith(`${name}{`) && l.includes(`kind="${kind}"`));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('with records of every kind', () => {
  const referenced: string[] = [];
  const orphans: { key: string; size: number }[] = [];
  let tempFiles: string[] = [];
  let uploaded: { id: string; bytes: Buffer };

  beforeAll(async () => {
    // An upload (processing completed, with its preview), one still waiting to be processed whose
    // preview a processor already stored, an avatar replaced once, a category's image.
    const bytes = randomBytes(5000);
    const first = await upload(api, user.token, 'scan.nii', bytes);
    expect(first.status).toBe(201);
    uploaded = { id: first.body.id as string, bytes };
    await finishProcessing(service.databaseUrl, service.dataDir, uploaded.id, {
      metadata: { format: 'nifti' },
      preview: encodePng(4, 4),
    });
    const waiting = await upload(api, user.token, 'waiting.nii', randomBytes(3000));
    expect(waiting.status).toBe(201);
    await blobs.put(uploadPreviewKey(waiting.body.id as string), Readable.from([encodePng(2, 2)]));
    for (const name of ['me.png', 'me-again.png']) {
      const profile = await api.patch('/api/profile/', {
        token: user.token,
        body: form('avatar', name, encodePng(3, 3)),
      });
      expect(profile.status).toBe(200);
    }
    const category = await api.post('/api/categories/', {
      token: staff,
      body: form('image', 'c.png', encodePng(5, 5), { name: `swept-${randomUUID().slice(0, 8)}` }),
    });
    expect(category.status).toBe(201);
    referenced.push(...(await keys()));
    // uploads x2, previews x2, one avatar (the first was replaced and deleted), one category image.
    expect(referenced.map((key) => key.split('/')[0]).sort()).toEqual([
      'avatars',
      'categories',
      'previews',
      'previews',
      'uploads',
      'uploads',
    ]);

    // A deleted upload whose bytes outlived it (killed before the delete after its commit).
    const deleted = await upload(api, user.token, 'deleted.nii', randomBytes(2000));
    expect(deleted.status).toBe(201);
    const deletedKey = (await keys()).find((key) => key.startsWith('uploads/') && !referenced.includes(key))!;
    expect(
      (await api.delete(`/api/file-uploads/${deleted.body.id as string}/`, { token: user.token })).status,
    ).toBe(204);
    expect(await keys()).not.toContain(deletedKey);
    orphans.push(await plantOrphan(deletedKey, 2000));
    // Complete blobs no record names, of every kind.
    orphans.push(
      await plantOrphan(`uploads/${randomUUID()}.nii`, 7000),
      await plantOrphan(`uploads/${randomUUID()}.nii.gz`, 300),
      await plantOrphan(`previews/${randomUUID()}.png`, 100),
      await plantOrphan(`avatars/${user.id}/${randomUUID()}.png`, 200),
      await plantOrphan(`categories/${randomUUID()}.png`, 50),
    );
    // Outside the catalogue's prefixes: never taken for an orphan.
    await plantOrphan('elsewhere/not-ours.bin', 10);
    tempFiles = [
      await plantTempFile(`uploads/${randomUUID()}.nii`, 4096),
      await plantTempFile(`previews/${randomUUID()}.png`, 10),
    ];
  }, 60_000);

  test('young blobs and fresh leftovers are kept', async () => {
    const before = await keys();

    const report = await sweepAt(0);

    expect(report).toEqual({
      leftovers: { count: 0, bytes: 0 },
      orphans: { count: 0, bytes: 0 },
      orphansChecked: true,
      failures: 0,
    });
    expect(await keys()).toEqual(before);
    expect(await leftoverIds()).toEqual(expect.arrayContaining(tempFiles));
  });

  test('past the grace periods, leftovers and blobs no record names go; every blob a record names stays', async () => {
    const leftoversBefore = await metricValue('blob_sweep_removed_total', 'leftover');

    const report = await sweepAt(LATER);

    expect(report).toEqual({
      leftovers: { count: 2, bytes: 4096 + 10 },
      orphans: { count: orphans.length, bytes: orphans.reduce((sum, o) => sum + o.size, 0) },
      orphansChecked: true,
      failures: 0,
    });
    expect(await keys()).toEqual([...referenced, 'elsewhere/not-ours.bin'].sort());
    expect(await leftoverIds()).toEqual([]);
    expect(await metricValue('blob_sweep_removed_total', 'leftover')).toBe(leftoversBefore + 2);
    expect(await metricValue('blob_sweep_removed_bytes_total', 'orphan')).toBeGreaterThanOrEqual(
      report!.orphans.bytes,
    );
    // What users see is all there.
    const download = await fetch(`${service.url}/api/file-uploads/${uploaded.id}/download/`, {
      headers: { Authorization: `Token ${user.token}` },
    });
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(uploaded.bytes)).toBe(true);
    const me = await api.get('/api/auth/me/', { token: user.token });
    expect((await fetch(me.body.avatar as string)).status).toBe(200);

    // A second sweep finds nothing more.
    expect(await sweepAt(LATER)).toMatchObject({ leftovers: { count: 0 }, orphans: { count: 0 } });
  });
});

test('while a transaction older than the sweep is open, leftovers go but orphans wait for the next sweep', async () => {
  const orphan = await plantOrphan(`uploads/${randomUUID()}.nii`);
  const temp = await plantTempFile(`uploads/${randomUUID()}.nii`, 64);
  // An append may be in that transaction: its events are not in the head the read models are compared with.
  const held = new pg.Client({ connectionString: service.databaseUrl });
  await held.connect();
  try {
    await held.query('BEGIN');
    await held.query('SELECT pg_current_xact_id()');

    const report = await sweepAt(LATER, { catchUpTimeoutMs: 1000 });

    expect(report).toMatchObject({
      leftovers: { count: 1, bytes: 64 },
      orphans: { count: 0 },
      orphansChecked: false,
    });
    expect(await keys()).toContain(orphan.key);
    expect(await leftoverIds()).not.toContain(temp);
  } finally {
    await held.query('COMMIT').catch(() => undefined);
    await held.end();
  }
  expect(await sweepAt(LATER)).toMatchObject({
    orphans: { count: 1, bytes: orphan.size },
    orphansChecked: true,
  });
  expect(await keys()).not.toContain(orphan.key);
});

test('two sweepers at once: one sweeps, the other stands by, and nothing is removed twice', async () => {
  const planted = [
    await plantOrphan(`uploads/${randomUUID()}.nii`, 11),
    await plantOrphan(`previews/${randomUUID()}.png`, 13),
  ];
  let entered!: () => void;
  const insideSweep = new Promise<void>((resolve) => (entered = resolve));
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  // The first sweeper pauses inside its sweep, holding the lock, until the second has tried.
  const paused: BlobStore = {
    ...blobs,
    async *listLeftovers() {
      entered();
      await gate;
      yield* blobs.listLeftovers();
    },
  };

  const first = sweepAt(LATER, {}, { blobs: paused });
  await insideSweep;
  const second = await sweepAt(LATER);
  release();
  const report = await first;

  expect(second).toBeUndefined();
  expect(report).toMatchObject({ orphans: { count: 2, bytes: 24 }, orphansChecked: true });
  for (const { key } of planted) expect(await blobs.stat(key)).toBeUndefined();
  // Once the first is done, the lock is free again.
  expect(await sweepAt(LATER)).toMatchObject({ orphans: { count: 0 }, orphansChecked: true });
});

test('a blob named only by an event the read models have not applied is kept', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'sweep-lagging-'));
  const elsewhere = createLocalDiskBlobStore({ rootDir: root });
  const named = `uploads/${randomUUID()}.nii`;
  const unnamed = `uploads/${randomUUID()}.nii`;
  for (const key of [named, unnamed]) await elsewhere.put(key, Readable.from([randomBytes(100)]));
  const databaseUrl = service.databaseUrl;
  // No projector runs while the event naming `named` is appended.
  await service.close();
  const uploadId = randomUUID();
  const command = {
    type: 'ReceiveUpload' as const,
    data: {
      uploadId,
      name: 'late.nii',
      filename: 'late.nii',
      sizeBytes: 100,
      sha256: '0'.repeat(64),
      mimeType: 'application/octet-stream',
      blobKey: named,
      uploaderId: user.id,
      associatedBrainId: null,
      receivedAt: new Date().toISOString(),
    },
  };
  await handleCommand(
    store,
    uploadStreamName(uploadId),
    uploadDecider,
    (state: UploadState) => decideUpload(command, state),
    {
      actor: 'test',
      requestId: 'test',
      correlationId: 'test',
      causationId: null,
    },
  );
  try {
    const behind = await sweepAt(LATER, { catchUpTimeoutMs: 1000 }, { blobs: elsewhere });
    expect(behind).toMatchObject({ orphans: { count: 0 }, orphansChecked: false });
    expect(await keys(elsewhere)).toEqual([named, unnamed].sort());

    // Another instance on the same database catches the read models up.
    service = await startTestService(
      { BLOB_SWEEP_ENABLED: 'false', PROCESSOR_ENABLED: 'false' },
      databaseUrl,
    );
    const caughtUp = await sweepAt(LATER, {}, { blobs: elsewhere });
    expect(caughtUp).toMatchObject({ orphans: { count: 1, bytes: 100 }, orphansChecked: true });
    expect(await keys(elsewhere)).toEqual([named]);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}, 60_000);

test('before any projector has installed the read models, leftovers go and no blob is taken for an orphan', async () => {
  const databaseUrl = await createTestDatabase('sweep-empty');
  const emptyStore = createPostgresEventStore({ connectionString: databaseUrl, poolSize: 1 });
  const emptyPool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const root = await mkdtemp(path.join(tmpdir(), 'sweep-empty-'));
  try {
    await emptyStore.migrate();
    const elsewhere = createLocalDiskBlobStore({ rootDir: root });
    const orphan = `uploads/${randomUUID()}.nii`;
    await elsewhere.put(orphan, Readable.from([randomBytes(10)]));
    await mkdir(path.join(root, 'uploads'), { recursive: true });
    await writeFile(
      path.join(root, 'uploads', `x.nii~${randomBytes(8).toString('hex')}.tmp`),
      randomBytes(33),
    );

    const report = await sweepAt(
      LATER,
      { catchUpTimeoutMs: 500 },
      { blobs: elsewhere, pool: emptyPool, store: emptyStore },
    );

    expect(report).toEqual({
      leftovers: { count: 1, bytes: 33 },
      orphans: { count: 0, bytes: 0 },
      orphansChecked: false,
      failures: 0,
    });
    expect(await keys(elsewhere)).toEqual([orphan]);
  } finally {
    await emptyPool.end();
    await emptyStore.close();
    await rm(root, { recursive: true, force: true });
  }
});
