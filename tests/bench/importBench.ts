import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { niftiBytes } from '#tests/e2e/brains/brainFixtures';
import type { BenchPostgres } from './benchPostgres';
import { BENCH_STAFF, spawnBenchService } from './benchService';
import type { Cleanup } from './cleanup';
import { type Figure, milliseconds, perSecond } from './figure';
import { printDetail, printSection } from './report';
import { percentile } from './stats';

export interface ImportBenchOptions {
  /** BENCH_IMPORT_COUNT, default 1000. */
  readonly count: number;
  readonly jobs: number;
}

export function importBenchOptions(env: NodeJS.ProcessEnv): ImportBenchOptions {
  const count = Number(env.BENCH_IMPORT_COUNT ?? 1000);
  if (!Number.isSafeInteger(count) || count < 1)
    throw new Error(`BENCH_IMPORT_COUNT must be a positive integer`);
  return { count, jobs: 8 };
}

/**
 * `bic import --jobs 8` of a folder of small NIfTIs, end to end: the CLI as a user runs it (its own
 * process, from `cli/bic.cjs`), against the all-in-one (its own process, upload processor
 * included) on the embedded PostgreSQL, timed from the CLI's start until every upload's processing
 * has completed. Per brain: the CLI's time for that file (hash, send, answer) plus the server's
 * time from its create to processing completed.
 */
export async function measureImport(
  pg: BenchPostgres,
  cleanup: Cleanup,
  options: ImportBenchOptions,
): Promise<Figure[]> {
  printSection(`bic import --jobs ${options.jobs}: ${options.count} small NIfTIs, processing included`);
  const dataDir = path.join(pg.scratchDir, 'import-bench');
  const scans = path.join(dataDir, 'scans');
  const configDir = path.join(dataDir, 'bic-config');
  mkdirSync(scans, { recursive: true });
  const stopDir = cleanup.defer('import bench data', () => rmSync(dataDir, { recursive: true, force: true }));
  const server = await spawnBenchService(
    await pg.createDatabase('import_bench'),
    path.join(dataDir, 'service'),
    undefined,
  );
  const stopServer = cleanup.defer('import bench server', () => server.kill());
  try {
    const staff = await login(server.url, BENCH_STAFF.email, BENCH_STAFF.password);
    const category = `import-bench-${Date.now()}`;
    await post(server.url, '/api/categories/', staff, { name: category });
    const token = await account(server.url);
    for (let n = 0; n < options.count; n++) writeFileSync(path.join(scans, `scan-${n}.nii`), numbered(n));

    const started = Date.now();
    const cli = await runBic(
      ['import', scans, '--category', category, '--jobs', String(options.jobs), '--json'],
      { BIC_SERVER: server.url, BIC_TOKEN: token, BIC_CONFIG_DIR: configDir },
    );
    const cliSeconds = (Date.now() - started) / 1000;
    if (cli.code !== 0) throw new Error(`bic import exited ${cli.code}: ${cli.stderr.slice(-2000)}`);
    const outcomes = JSON.parse(cli.stdout) as { status: string; id: number; ms: number }[];
    const created = outcomes.filter((o) => o.status === 'created').length;
    if (created !== options.count) throw new Error(`bic import created ${created} of ${options.count}`);
    let completedAt = Date.now();
    for (;;) {
      const [completed, failed] = await Promise.all([
        countUploads(server.url, token, 'completed'),
        countUploads(server.url, token, 'failed'),
      ]);
      completedAt = Date.now();
      if (failed > 0) throw new Error(`${failed} uploads failed processing`);
      if (completed >= options.count) break;
      if (completedAt - started > 30 * 60_000)
        throw new Error(`only ${completed} of ${options.count} processed in 30 min`);
      await sleep(100);
    }
    const totalSeconds = (completedAt - started) / 1000;
    const uploads = await allUploads(server.url, token);
    const byBrain = new Map(uploads.map((u) => [u.associated_brain?.id, u]));
    const latencies = outcomes.map((o) => {
      const upload = byBrain.get(o.id);
      if (!upload?.processing_completed) throw new Error(`no processed upload for brain ${o.id}`);
      return o.ms + (Date.parse(upload.processing_completed) - Date.parse(upload.date_uploaded));
    });
    const cliMs = outcomes.map((o) => o.ms);
    const firstStarted = Math.min(...uploads.map((u) => Date.parse(u.processing_started ?? u.date_uploaded)));
    const lastCompleted = Math.max(
      ...uploads.map((u) => Date.parse(u.processing_completed ?? u.date_uploaded)),
    );
    const processedPerSecond = (uploads.length * 1000) / Math.max(lastCompleted - firstStarted, 1);
    // Where the time goes: the same creates from a bare Node client (no bic), at the same concurrency
    // (after bic's, so the processor still works through bic's uploads meanwhile when it is slow).
    const reference = Math.min(options.count, 200);
    const referenceStarted = Date.now();
    await createsWithoutBic(server.url, token, category, reference, options.jobs);
    const referenceRate = reference / ((Date.now() - referenceStarted) / 1000);
    const rate = options.count / totalSeconds;
    printDetail(
      `${options.count} brains: bic done in ${cliSeconds.toFixed(1)} s (${(options.count / cliSeconds).toFixed(0)}/s, its start-up included), every upload processed after ${totalSeconds.toFixed(1)} s → ${rate.toFixed(0)} brains/s`,
    );
    printDetail(
      `per brain: median ${percentile(latencies, 50).toFixed(0)} ms, p95 ${percentile(latencies, 95).toFixed(0)} ms end to end; in bic (hash, create, answer) median ${percentile(cliMs, 50).toFixed(0)} ms, p95 ${percentile(cliMs, 95).toFixed(0)} ms`,
    );
    printDetail(
      `where the time goes: the processor completed ${processedPerSecond.toFixed(0)} uploads/s (first start to last completion); ${reference} creates from a bare Node client (no bic, ${options.jobs} at once): ${referenceRate.toFixed(0)} creates/s`,
    );
    return [
      {
        name: `import: bic import --jobs ${options.jobs}, processed`,
        rounds: [rate],
        unit: perSecond('brains'),
        target: { kind: 'at least', value: 50 },
      },
      {
        name: 'import: per-brain latency, median',
        rounds: [percentile(latencies, 50)],
        unit: milliseconds,
        target: undefined,
      },
    ];
  } finally {
    await stopServer();
    await stopDir();
  }
}

/** `count` multipart creates of brains from a plain fetch client, `jobs` at once. */
async function createsWithoutBic(
  baseUrl: string,
  token: string,
  category: string,
  count: number,
  jobs: number,
) {
  const categories = await get<{ id: number; name: string }[]>(baseUrl, '/api/categories/', token);
  const categoryId = categories.find((c) => c.name === category)?.id;
  let next = 0;
  const worker = async () => {
    for (let n = next++; n < count; n = next++) {
      const form = new FormData();
      form.append('name', `reference-${n}`);
      form.append('category', String(categoryId));
      form.append('file', new Blob([numbered(1_000_000 + n)]), `reference-${n}.nii`);
      const response = await fetch(`${baseUrl}/api/brains/`, {
        method: 'POST',
        // An Idempotency-Key as bic sends: the server's keyed-write path is part of both figures.
        headers: { authorization: `Token ${token}`, 'idempotency-key': `reference-${n}-${Date.now()}` },
        body: form,
      });
      if (response.status !== 201)
        throw new Error(`reference create: ${response.status} ${await response.text()}`);
      await response.body?.cancel();
    }
  };
  await Promise.all(Array.from({ length: jobs }, worker));
}

/** A NIfTI of its own bytes (2×2×2 voxels whose values carry n). */
function numbered(n: number): Buffer {
  const bytes = niftiBytes();
  bytes.writeUInt32LE(n, bytes.length - 4);
  return bytes;
}

/** cli/bic.cjs of this checkout (from tests/bench or dist/tests/bench). */
function bicPath(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'cli', 'bic.cjs');
    if (existsSync(candidate)) return candidate;
  }
  throw new Error('cli/bic.cjs not found above the bench');
}

function runBic(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bicPath(), ...args], {
      cwd: path.dirname(path.dirname(bicPath())),
      env: { ...process.env, XDG_CONFIG_HOME: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function post(
  baseUrl: string,
  apiPath: string,
  token: string | undefined,
  body: unknown,
): Promise<unknown> {
  const response = await fetch(baseUrl + apiPath, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Token ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`POST ${apiPath}: ${response.status} ${await response.text()}`);
  return response.json();
}

async function login(baseUrl: string, email: string, password: string): Promise<string> {
  return ((await post(baseUrl, '/api/auth/login/', undefined, { email, password })) as { token: string })
    .token;
}

async function account(baseUrl: string): Promise<string> {
  const password = 'bench-password-1';
  const user = { email: 'importer@example.org', username: 'importer', first_name: 'I', last_name: 'M' };
  await post(baseUrl, '/api/auth/register/', undefined, { ...user, password, password_confirm: password });
  return login(baseUrl, user.email, password);
}

async function get<T>(baseUrl: string, apiPath: string, token: string): Promise<T> {
  const response = await fetch(baseUrl + apiPath, { headers: { authorization: `Token ${token}` } });
  if (!response.ok) throw new Error(`GET ${apiPath}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

const countUploads = async (baseUrl: string, token: string, status: string): Promise<number> =>
  (await get<{ count: number }>(baseUrl, `/api/file-uploads/?status=${status}&page_size=1`, token)).count;

interface UploadRow {
  associated_brain: { id: number } | null;
  date_uploaded: string;
  processing_started: string | null;
  processing_completed: string | null;
}

async function allUploads(baseUrl: string, token: string): Promise<UploadRow[]> {
  const rows: UploadRow[] = [];
  for (let page = 1; ; page++) {
    const body = await get<{ results: UploadRow[]; next: string | null }>(
      baseUrl,
      `/api/file-uploads/?page=${page}&page_size=100`,
      token,
    );
    rows.push(...body.results);
    if (!body.next) return rows;
  }
}
