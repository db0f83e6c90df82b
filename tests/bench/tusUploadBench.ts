import { benchAccount, removeUpload } from './benchAccount';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DEFAULT_CHUNK_BYTES } from '#cli/transfer/tusUpload';
import { freePort } from '#tests/support/freePort';
import { spawnService } from '#tests/support/spawnService';
import type { BenchPostgres } from './benchPostgres';
import type { Cleanup } from './cleanup';
import { type Figure, type Unit, percent } from './figure';
import { cpuSecondsOf, stopGracefully } from './benchProcesses';
import { printDetail, printFigure, printSection } from './report';

const MB = 1_000_000;
const CHUNK = 1024 * 1024;
/** `bic upload`'s PATCH size. */
const BIC_CHUNK = DEFAULT_CHUNK_BYTES;
const WARM_UP_BYTES = 64 * CHUNK;
const TUS = '/api/file-uploads/tus/';
const megabytesPerSecond: Unit = { suffix: 'MB/s', format: (n) => n.toFixed(0) };
const seconds: Unit = { suffix: 's', format: (n) => n.toFixed(2) };
const megabytes: Unit = { suffix: 'MB', format: (n) => n.toFixed(1) };
const count: Unit = { suffix: 'faults', format: (n) => n.toFixed(0) };

export interface TusBenchOptions {
  /** BENCH_TUS_BYTES, default 1 GiB (runs in well under 2 minutes here; the issue's figure is 4 GiB). */
  readonly bytes: number;
  /** BENCH_TUS_INTERRUPTIONS, default 3. */
  readonly interruptions: number;
  /** BENCH_TUS_ROUNDS, default 3: uninterrupted one-PATCH uploads, each between two plain writes. */
  readonly rounds: number;
  /**
   * BENCH_TUS_NODE_OPTIONS: the server's NODE_OPTIONS, e.g. `--import=./tests/bench/cpuProfiler.mjs`
   * with CPU_PROFILE_DIR=/tmp/prof for a CPU profile (Node 20 refuses --cpu-prof there). The server
   * is then stopped with SIGTERM, so that what the options write at exit is written, before it is
   * killed.
   */
  readonly serverNodeOptions: string | undefined;
}

export function tusBenchOptions(env: NodeJS.ProcessEnv): TusBenchOptions {
  return {
    bytes: Number(env.BENCH_TUS_BYTES ?? 1024 ** 3),
    interruptions: Number(env.BENCH_TUS_INTERRUPTIONS ?? 3),
    rounds: Number(env.BENCH_TUS_ROUNDS ?? 3),
    serverNodeOptions: env.BENCH_TUS_NODE_OPTIONS || undefined,
  };
}

/**
 * tus uploads (one PATCH per attempt, as tus-js-client sends a file by default: its chunkSize is
 * Infinity; and, as an extra figure, in 32 MiB PATCHes each with a SHA-256 Upload-Checksum, as
 * `bic upload` sends them) on the all-in-one
 * in a child process: throughput against a plain write of the same bytes to the same disk (before
 * and after, averaged), and the same upload with its connection destroyed `interruptions` times
 * (each time resumed from the offset HEAD gives) against the uninterrupted one, with the server's
 * RSS growth. Bytes are generated from one random MiB; each finished upload is deleted again.
 */
export async function measureTusUploads(
  pg: BenchPostgres,
  cleanup: Cleanup,
  options: TusBenchOptions,
): Promise<Figure[]> {
  printSection(
    `tus upload of ${(options.bytes / 2 ** 30).toFixed(2)} GiB, uninterrupted and interrupted ${options.interruptions} times (server in a child process)`,
  );
  const dataDir = path.join(pg.scratchDir, 'tus-bench');
  mkdirSync(dataDir, { recursive: true });
  const stopDir = cleanup.defer('tus bench data', () => rmSync(dataDir, { recursive: true, force: true }));
  const server = await spawnService(
    `services/all-in-one/main${path.extname(__filename)}`,
    {
      DATABASE_URL: await pg.createDatabase('tus_bench'),
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
      PASSWORD_HASH_LOG_N: '10',
      MAX_UPLOAD_BYTES: String(options.bytes + CHUNK),
      PROCESSOR_ENABLED: 'false',
      ...(options.serverNodeOptions ? { NODE_OPTIONS: options.serverNodeOptions } : {}),
    },
    // A busy machine (the other benchmarks, builds) can take a while to start it.
    120_000,
  );
  const stopServer = cleanup.defer('tus bench server', async () => {
    if (options.serverNodeOptions) await stopGracefully(server.pid);
    await server.kill();
  });
  const figures: Figure[] = [];
  try {
    const token = await benchAccount(server.url, 'tus');
    // Warm-up: every stage of the write (batches, O_DIRECT writes, the hashing thread, the JIT) has
    // run before the measured upload, as on a server that has been up a while (with 1 MiB, the
    // first measured upload ran slower than the interrupted one after it).
    const warmUp = Math.min(WARM_UP_BYTES, options.bytes);
    await removeUpload(server.url, token, await tusUpload(server.url, token, warmUp, []));
    const plainFile = path.join(dataDir, 'plain.bin');
    const gibibytes = options.bytes / 2 ** 30;

    const baseline = rssOf(server.pid);
    let sampler = sampleRss(server.pid);
    // Each round: a plain write, the upload, a plain write; the ratio is the round's own.
    const rounds: { rate: number; plain: number; seconds: number; cpu: number; faults: number }[] = [];
    for (let round = 0; round < Math.max(1, options.rounds); round += 1) {
      const plainBefore = await plainWrite(plainFile, options.bytes);
      const cpuBefore = cpuSecondsOf(server.pid);
      const faultsBefore = minorFaultsOf(server.pid);
      const threadsBefore = threadCpuSecondsOf(server.pid);
      const started = process.hrtime.bigint();
      await removeUpload(server.url, token, await tusUpload(server.url, token, options.bytes, []));
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      // CPU the server spent (all its threads), per GiB: far less noisy than time on a busy machine.
      const cpu = (cpuSecondsOf(server.pid) - cpuBefore) / gibibytes;
      // Pages the kernel had to fault in: freshly mapped memory costs this VM dearly.
      const faults = (minorFaultsOf(server.pid) - faultsBefore) / gibibytes;
      const threads = threadBreakdown(server.pid, threadsBefore, threadCpuSecondsOf(server.pid), gibibytes);
      const plain = (plainBefore + (await plainWrite(plainFile, options.bytes))) / 2;
      rounds.push({ rate: options.bytes / MB / seconds, plain, seconds, cpu, faults });
      printDetail(
        `round ${round + 1}: tus ${(options.bytes / MB / seconds).toFixed(0)} MB/s, plain write ${plain.toFixed(0)} MB/s (mean of before and after), server CPU ${cpu.toFixed(2)} s/GiB, ${faults.toFixed(0)} page faults/GiB, load ${loadAverage()}`,
      );
      printDetail(`round ${round + 1}: server CPU s/GiB by thread: ${threads}`);
    }
    const wholePeak = sampler.stop();
    const whole = median(rounds.map((r) => r.seconds));
    const cuts = Array.from({ length: options.interruptions }, (_, i) =>
      Math.floor((options.bytes * (i + 1)) / (options.interruptions + 1)),
    );
    sampler = sampleRss(server.pid);
    let started = process.hrtime.bigint();
    await removeUpload(server.url, token, await tusUpload(server.url, token, options.bytes, cuts));
    const interrupted = Number(process.hrtime.bigint() - started) / 1e9;
    const interruptedPeak = sampler.stop();
    // The same bytes as `bic upload` sends them: PATCHes of BIC_CHUNK, each with its Upload-Checksum.
    const cpuBeforeChunked = cpuSecondsOf(server.pid);
    started = process.hrtime.bigint();
    await removeUpload(server.url, token, await tusUploadInChunks(server.url, token, options.bytes));
    const chunked = Number(process.hrtime.bigint() - started) / 1e9;
    const chunkedCpuPerGib = ((cpuSecondsOf(server.pid) - cpuBeforeChunked) * 2 ** 30) / options.bytes;
    const chunkedRate = options.bytes / MB / chunked;
    const plain = median(rounds.map((r) => r.plain));
    printDetail(
      `tus median ${median(rounds.map((r) => r.rate)).toFixed(0)} MB/s (${whole.toFixed(2)} s), in ${BIC_CHUNK / CHUNK} MiB PATCHes with checksums ${chunkedRate.toFixed(0)} MB/s, plain write median ${plain.toFixed(0)} MB/s; interrupted at ${cuts.map((c) => `${((100 * c) / options.bytes).toFixed(0)} %`).join(', ')}: ${interrupted.toFixed(2)} s; server RSS ${(baseline / MB).toFixed(0)} → peak ${(Math.max(wholePeak, interruptedPeak) / MB).toFixed(0)} MB`,
    );
    figures.push(
      {
        name: 'tus: upload (one PATCH)',
        rounds: rounds.map((r) => r.rate),
        unit: megabytesPerSecond,
        target: undefined,
      },
      {
        name: 'tus: plain Node stream write + fsync',
        rounds: rounds.map((r) => r.plain),
        unit: megabytesPerSecond,
        target: undefined,
      },
      {
        name: 'tus: speed vs plain write',
        rounds: rounds.map((r) => r.rate / r.plain),
        unit: percent,
        target: { kind: 'at least', value: 0.7 },
      },
      {
        name: `tus: upload in ${BIC_CHUNK / CHUNK} MiB PATCHes with Upload-Checksum (bic upload)`,
        rounds: [chunkedRate],
        unit: megabytesPerSecond,
        target: undefined,
      },
      {
        name: 'tus: bic upload speed vs plain write',
        rounds: [chunkedRate / plain],
        unit: percent,
        target: undefined,
      },
      {
        name: 'tus: server CPU per GiB in bic upload PATCHes',
        rounds: [chunkedCpuPerGib],
        unit: seconds,
        target: undefined,
      },
      {
        name: 'tus: uninterrupted upload time',
        rounds: rounds.map((r) => r.seconds),
        unit: seconds,
        target: undefined,
      },
      {
        name: 'tus: server CPU per GiB uploaded',
        rounds: rounds.map((r) => r.cpu),
        unit: seconds,
        target: undefined,
      },
      {
        name: 'tus: server page faults per GiB',
        rounds: rounds.map((r) => r.faults),
        unit: count,
        target: undefined,
      },
      {
        name: `tus: upload interrupted ${options.interruptions} times`,
        rounds: [interrupted],
        unit: seconds,
        target: undefined,
      },
      {
        name: 'tus: interrupted vs uninterrupted time',
        rounds: [interrupted / whole],
        unit: percent,
        target: { kind: 'at most', value: 1.15 },
      },
      {
        name: 'tus: server peak RSS growth',
        rounds: [(Math.max(wholePeak, interruptedPeak) - baseline) / MB],
        unit: megabytes,
        target: { kind: 'at most', value: 100 },
      },
    );
  } finally {
    await stopServer();
    await stopDir();
  }
  figures.forEach(printFigure);
  return figures;
}

/** Bytes [from, to) of the generated file: one random MiB repeated, so any offset can be produced. */
const block = randomBytes(CHUNK);
function generated(from: number, to: number): Readable {
  let at = from;
  return new Readable({
    read() {
      if (at >= to) return void this.push(null);
      const start = at % CHUNK;
      const n = Math.min(to - at, CHUNK - start);
      at += n;
      this.push(block.subarray(start, start + n));
    },
  });
}

async function plainWrite(file: string, size: number): Promise<number> {
  const started = process.hrtime.bigint();
  await pipeline(generated(0, size), createWriteStream(file));
  const handle = await open(file, 'r+');
  await handle.sync().finally(() => handle.close());
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  rmSync(file);
  return size / MB / elapsed;
}

interface TusReply {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
}

function request(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: { from: number; to: number; cutAt?: number },
): Promise<TusReply | 'cut'> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: { 'Tus-Resumable': '1.0.0', ...headers } });
    req.once('response', (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode!, headers: res.headers }));
    });
    if (!body) {
      req.once('error', reject);
      return void req.end();
    }
    req.once('error', (error) => (body.cutAt === undefined ? reject(error) : resolve('cut')));
    const source = generated(body.from, body.to);
    let sent = body.from;
    if (body.cutAt !== undefined) {
      const cutAt = body.cutAt;
      source.on('data', (chunk: Buffer) => {
        sent += chunk.length;
        // The connection dropped mid-body, as a network would.
        if (sent >= cutAt) {
          source.unpipe(req);
          source.destroy();
          req.destroy();
          resolve('cut');
        }
      });
    }
    source.pipe(req);
  });
}

/** Creates an upload and sends it, its connection destroyed at each of `cuts`; resolves with its id. */
async function tusUpload(
  baseUrl: string,
  token: string,
  size: number,
  cuts: readonly number[],
): Promise<string> {
  const auth = { Authorization: `Token ${token}` };
  const created = await request(`${baseUrl}${TUS}`, 'POST', {
    ...auth,
    'Upload-Length': String(size),
    'Upload-Metadata': `filename ${Buffer.from('bench.nii').toString('base64')}`,
  });
  if (created === 'cut' || created.status !== 201) throw new Error(`tus create: ${JSON.stringify(created)}`);
  const url = created.headers.location!;
  let offset = 0;
  for (const cutAt of [...cuts, undefined]) {
    const patched = await request(
      url,
      'PATCH',
      {
        ...auth,
        'Upload-Offset': String(offset),
        'Content-Type': 'application/offset+octet-stream',
        'Content-Length': String(size - offset),
      },
      { from: offset, to: size, cutAt },
    );
    if (patched !== 'cut') {
      if (patched.status !== 204) throw new Error(`tus PATCH: ${patched.status}`);
      return url.split('/').pop()!;
    }
    // Where to resume: HEAD waits for the interrupted PATCH to let go of the upload.
    const head = await request(url, 'HEAD', auth);
    if (head === 'cut' || head.status !== 200) throw new Error(`tus HEAD: ${JSON.stringify(head)}`);
    offset = Number(head.headers['upload-offset']);
  }
  throw new Error('unreachable');
}

/** The SHA-256 (base64) of generated bytes [from, to), computed once per distinct range of the block. */
const digests = new Map<string, string>();
function generatedSha256(from: number, to: number): string {
  const key = `${from % CHUNK} ${to - from}`;
  let digest = digests.get(key);
  if (digest === undefined) {
    const hash = createHash('sha256');
    for (let at = from; at < to;) {
      const start = at % CHUNK;
      const n = Math.min(to - at, CHUNK - start);
      hash.update(block.subarray(start, start + n));
      at += n;
    }
    digests.set(key, (digest = hash.digest('base64')));
  }
  return digest;
}

/**
 * Creates an upload and sends it as `bic upload` does (cli/transfer/tusUpload.ts): one PATCH per
 * BIC_CHUNK bytes, each with `Upload-Checksum: sha256 …`; resolves with its id.
 */
async function tusUploadInChunks(baseUrl: string, token: string, size: number): Promise<string> {
  const auth = { Authorization: `Token ${token}` };
  const created = await request(`${baseUrl}${TUS}`, 'POST', {
    ...auth,
    'Upload-Length': String(size),
    'Upload-Metadata': `filename ${Buffer.from('bench.nii').toString('base64')}`,
  });
  if (created === 'cut' || created.status !== 201) throw new Error(`tus create: ${JSON.stringify(created)}`);
  const url = created.headers.location!;
  for (let offset = 0; offset < size;) {
    const end = Math.min(offset + BIC_CHUNK, size);
    const patched = await request(
      url,
      'PATCH',
      {
        ...auth,
        'Upload-Offset': String(offset),
        'Upload-Checksum': `sha256 ${generatedSha256(offset, end)}`,
        'Content-Type': 'application/offset+octet-stream',
        'Content-Length': String(end - offset),
      },
      { from: offset, to: end },
    );
    if (patched === 'cut' || patched.status !== 204) throw new Error(`tus PATCH: ${JSON.stringify(patched)}`);
    offset = Number(patched.headers['upload-offset']);
  }
  return url.split('/').pop()!;
}

function statusKb(pid: number, field: 'VmRSS'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no ${field} for process ${pid}`);
  return Number(match[1]) * 1024;
}

const rssOf = (pid: number): number => statusKb(pid, 'VmRSS');

/** Minor page faults of a process so far, all its threads (/proc/<pid>/stat). */
function minorFaultsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[7]);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

/**
 * CPU seconds (user and system) so far of each thread of a process, by thread id
 * (/proc/<pid>/task/<tid>/stat): Node 20 names them all "node"; the event loop's id is the pid.
 */
function threadCpuSecondsOf(pid: number): Map<string, number> {
  const byThread = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      byThread.set(tid, (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // the thread ended
    }
  }
  return byThread;
}

/**
 * A round's CPU per GiB by thread: the event loop, the three busiest other threads (the hashing
 * thread, libuv's pool threads doing the writes and fsync, V8's collector), then the rest.
 */
function threadBreakdown(
  pid: number,
  before: Map<string, number>,
  after: Map<string, number>,
  gibibytes: number,
): string {
  const spent = [...after]
    .map(([tid, total]) => ({ tid, perGib: (total - (before.get(tid) ?? 0)) / gibibytes }))
    .filter((t) => t.perGib > 0);
  const loop = spent.find((t) => t.tid === String(pid))?.perGib ?? 0;
  const others = spent.filter((t) => t.tid !== String(pid)).sort((a, b) => b.perGib - a.perGib);
  const rest = others.slice(3).reduce((sum, t) => sum + t.perGib, 0);
  return [
    `event loop ${loop.toFixed(2)}`,
    ...others.slice(0, 3).map((t) => `thread ${t.tid} ${t.perGib.toFixed(2)}`),
    `${others.length - Math.min(3, others.length)} others ${rest.toFixed(2)}`,
  ].join(', ');
}

/** The peak of a process's RSS, sampled every 20 ms from now until stop(). */
function sampleRss(pid: number): { stop(): number } {
  let peak = rssOf(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssOf(pid));
    } catch {
      // gone: the upload fails and says so
    }
  }, 20);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, rssOf(pid));
    },
  };
}
