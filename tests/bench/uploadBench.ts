import { benchAccount, removeUpload } from './benchAccount';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { freePort } from '#tests/support/freePort';
import { spawnService } from '#tests/support/spawnService';
import type { BenchPostgres } from './benchPostgres';
import type { Cleanup } from './cleanup';
import { type Figure, type Unit, percent } from './figure';
import { printDetail, printFigure, printSection } from './report';

const MB = 1_000_000;
const CHUNK = 1024 * 1024;
const megabytesPerSecond: Unit = { suffix: 'MB/s', format: (n) => n.toFixed(0) };
const seconds: Unit = { suffix: 's', format: (n) => n.toFixed(2) };
const megabytes: Unit = { suffix: 'MB', format: (n) => n.toFixed(1) };

export interface UploadBenchOptions {
  /** BENCH_UPLOAD_BYTES, default 2 GiB. */
  readonly bytes: number;
  readonly rounds: number;
}

export function uploadBenchOptions(env: NodeJS.ProcessEnv): UploadBenchOptions {
  return {
    bytes: Number(env.BENCH_UPLOAD_BYTES ?? 2 * 1024 ** 3),
    rounds: Number(env.BENCH_UPLOAD_ROUNDS ?? 1),
  };
}

/**
 * One streamed upload of `bytes` through POST /api/file-uploads/ on the all-in-one in a child
 * process (so its RSS is its own), next to writing the same bytes to a file on the same disk with
 * a plain Node stream (before and after it, averaged) and to the same body POSTed to a bare server
 * that only stores it (tests/bench/bareStoringServer); both end with an fsync, as the BlobStore does before it answers. The bytes
 * are generated on the fly from one random MiB; nothing of that size is kept anywhere.
 */
export async function measureUploads(
  pg: BenchPostgres,
  cleanup: Cleanup,
  options: UploadBenchOptions,
): Promise<Figure[]> {
  printSection(`streamed upload of ${(options.bytes / 2 ** 30).toFixed(2)} GiB (server in a child process)`);
  const dataDir = path.join(pg.scratchDir, 'upload-bench');
  mkdirSync(dataDir, { recursive: true });
  const stopDir = cleanup.defer('upload bench data', () => rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const server = await spawnService(`services/all-in-one/main${path.extname(__filename)}`, {
    DATABASE_URL: await pg.createDatabase('upload_bench'),
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'warn',
    PASSWORD_HASH_LOG_N: '10',
    MAX_UPLOAD_BYTES: String(options.bytes + CHUNK),
  });
  const stopServer = cleanup.defer('upload bench server', () => server.kill());
  const bare = await spawnService(`tests/bench/bareStoringServer${path.extname(__filename)}`, {
    DATA_DIR: dataDir,
    PORT: String(await freePort()),
  });
  const stopBare = cleanup.defer('bare storing server', () => bare.kill());
  const upload = {
    rate: [] as number[],
    plain: [] as number[],
    ratio: [] as number[],
    rss: [] as number[],
    cpu: [] as number[],
    bare: [] as number[],
    bareCpu: [] as number[],
    ofBare: [] as number[],
    bareOfPlain: [] as number[],
  };
  try {
    const token = await benchAccount(server.url, 'uploader');
    await postUpload(server.url, token, CHUNK); // warm-up: code paths loaded, pools open
    await postUpload(bare.url, token, CHUNK);
    const gibibytes = options.bytes / 2 ** 30;
    /** One upload of the bench's bytes: its id, MB/s, and the receiving process's CPU per GiB. */
    const timedUpload = async (target: { url: string; pid: number }) => {
      const cpuBefore = cpuSecondsOf(target.pid);
      const started = process.hrtime.bigint();
      const id = await postUpload(target.url, token, options.bytes);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      return {
        id,
        rate: options.bytes / MB / seconds,
        cpu: (cpuSecondsOf(target.pid) - cpuBefore) / gibibytes,
      };
    };
    for (let round = 0; round < options.rounds; round++) {
      // The disk's speed drifts (writeback, a shared VM disk): the plain write runs before and
      // after the upload, and the upload is held against their mean.
      const plainFile = path.join(dataDir, 'plain.bin');
      const before = await plainWrite(plainFile, options.bytes);
      // The bare server and the service take turns going first: whichever follows the plain
      // write meets the page cache it left.
      const bareFirst = round % 2 === 1 ? await timedUpload(bare) : undefined;
      const baseline = rssOf(server.pid);
      const sampler = sampleRss(server.pid);
      const service = await timedUpload(server);
      const peak = sampler.stop();
      await removeUpload(server.url, token, service.id);
      const bareRun = bareFirst ?? (await timedUpload(bare));
      const plain = (before + (await plainWrite(plainFile, options.bytes))) / 2;
      upload.rate.push(service.rate);
      upload.cpu.push(service.cpu);
      upload.plain.push(plain);
      upload.ratio.push(service.rate / plain);
      upload.bare.push(bareRun.rate);
      upload.bareCpu.push(bareRun.cpu);
      upload.ofBare.push(service.rate / bareRun.rate);
      upload.bareOfPlain.push(bareRun.rate / plain);
      upload.rss.push((peak - baseline) / MB);
      printDetail(
        `round ${round + 1}: upload ${service.rate.toFixed(0)} MB/s, bare storing server ${bareRun.rate.toFixed(0)} MB/s, plain write ${plain.toFixed(0)} MB/s (mean of before and after), server RSS ${(baseline / MB).toFixed(0)} → peak ${(peak / MB).toFixed(0)} MB`,
      );
    }
  } finally {
    await stopBare();
    await stopServer();
    await stopDir();
  }
  const figures: Figure[] = [
    {
      name: 'upload: streamed POST /api/file-uploads/',
      rounds: upload.rate,
      unit: megabytesPerSecond,
      target: undefined,
    },
    {
      name: 'upload: plain Node stream write + fsync',
      rounds: upload.plain,
      unit: megabytesPerSecond,
      target: undefined,
    },
    {
      name: 'upload: speed vs plain write',
      rounds: upload.ratio,
      unit: percent,
      target: { kind: 'at least', value: 0.7 },
    },
    {
      // What the machine's load cannot distort: the server's own CPU time for the bytes.
      name: 'upload: server CPU time per GiB',
      rounds: upload.cpu,
      unit: seconds,
      target: undefined,
    },
    {
      // The least any upload endpoint does with the bytes (tests/bench/bareStoringServer): what is
      // left between it and the plain write is the machine's, not the service's.
      name: 'upload: bare storing server (receive, SHA-256, write, fsync)',
      rounds: upload.bare,
      unit: megabytesPerSecond,
      target: undefined,
    },
    {
      name: 'upload: bare storing server vs plain write',
      rounds: upload.bareOfPlain,
      unit: percent,
      target: undefined,
    },
    { name: 'upload: speed vs bare storing server', rounds: upload.ofBare, unit: percent, target: undefined },
    {
      name: 'upload: bare storing server CPU time per GiB',
      rounds: upload.bareCpu,
      unit: seconds,
      target: undefined,
    },
    {
      name: 'upload: server peak RSS growth',
      rounds: upload.rss,
      unit: megabytes,
      target: { kind: 'at most', value: 100 },
    },
  ];
  figures.forEach(printFigure);
  return figures;
}

/** `size` bytes, in 1 MiB chunks of one random buffer (content that does not compress away). */
function generated(size: number): Readable {
  const block = randomBytes(CHUNK);
  let left = size;
  return new Readable({
    read() {
      if (left <= 0) return void this.push(null);
      const n = Math.min(left, CHUNK);
      left -= n;
      this.push(n === CHUNK ? block : block.subarray(0, n));
    },
  });
}

/** MB/s of writing `size` generated bytes to `file` and fsyncing it. */
async function plainWrite(file: string, size: number): Promise<number> {
  const started = process.hrtime.bigint();
  await pipeline(generated(size), createWriteStream(file));
  const handle = await open(file, 'r+');
  await handle.sync().finally(() => handle.close());
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  rmSync(file);
  return size / MB / seconds;
}

/** Streams a multipart body of `size` generated bytes; resolves with the upload id of the 201. */
function postUpload(baseUrl: string, token: string, size: number): Promise<string> {
  const boundary = `bench${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.nii"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const req = http.request(`${baseUrl}/api/file-uploads/`, {
      method: 'POST',
      headers: {
        Authorization: `Token ${token}`,
        'Content-Type': `multipart/form-data; boundary=${boundary}`,
        'Content-Length': String(head.length + size + tail.length),
      },
    });
    req.once('error', reject);
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('end', () => {
        const text = Buffer.concat(chunks).toString();
        if (res.statusCode !== 201) return reject(new Error(`upload: ${res.statusCode} ${text}`));
        resolve((JSON.parse(text) as { id: string }).id);
      });
    });
    req.write(head);
    const body = generated(size);
    body.pipe(req, { end: false });
    body.once('end', () => req.end(tail));
  });
}

/** A size field of /proc/<pid>/status, in bytes (Linux). */
function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no ${field} for process ${pid}`);
  return Number(match[1]) * 1024;
}

/** User + system CPU time a process has used, in seconds (Linux /proc, clock ticks of 1/100 s). */
function cpuSecondsOf(pid: number): number {
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Resident set size of a process in bytes. */
const rssOf = (pid: number): number => statusKb(pid, 'VmRSS');

/**
 * Watches a process's peak RSS from now on: the kernel's high-water mark (VmHWM, reset through
 * clear_refs where allowed), and a sample every 20 ms in case it is not; stop() returns the peak.
 */
function sampleRss(pid: number): { stop(): number } {
  let resetHighWater = true;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    resetHighWater = false;
  }
  let peak = rssOf(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssOf(pid));
    } catch {
      // The process is gone: the upload fails and reports it.
    }
  }, 20);
  return {
    stop() {
      clearInterval(timer);
      const highWater = resetHighWater ? statusKb(pid, 'VmHWM') : 0;
      return Math.max(peak, rssOf(pid), highWater);
    },
  };
}
