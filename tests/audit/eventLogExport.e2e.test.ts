import { readFileSync } from 'node:fs';
import http from 'node:http';
import { Client } from 'pg';
import { spawnedServiceEnv } from '#tests/support/serviceEnv';
import { spawnAllInOne, type ServiceProcess } from '#tests/support/spawnService';
import { client } from '#tests/support/httpClient';
import { scratchDir } from '#tests/support/scratchDir';
import { waitFor } from '#tests/support/waitFor';

/**
 * The NDJSON export in constant memory (issue 18): 200,000 events, seeded straight into the audit
 * log as the database owner, streamed from the all-in-one run as its own process through a reader slower than the
 * server: the server's RSS must grow by less than 50 MB, and every line must arrive, once, parsed.
 */
const SEEDED = 200_000;
const MAX_GROWTH_BYTES = 50 * 1024 * 1024;
const STAFF = { email: 'export-curator@example.org', password: 'export-curator-password' };

let service: ServiceProcess | undefined;
let db: Client | undefined;
let token: string;

afterAll(async () => {
  await service?.kill();
  await db?.end();
});

const rssBytes = (pid: number): number => {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for ${pid}`);
  return Number(match[1]) * 1024;
};

/**
 * `count` internal IdAllocated rows appended to the audit log once the projector is idle (every
 * stored event applied), numbered on from its head as the projection numbers them: what 200,000
 * events appended and projected would leave there, in seconds rather than the minutes the
 * projector takes for them on a busy two-core machine (the ledger does not chain them; no
 * verification runs in this test). Returns the log's event count.
 */
async function seedAuditLog(db: Client, count: number): Promise<number> {
  const stored = async (): Promise<number> =>
    Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM event_store.events')).rows[0]!.n);
  const applied = async (): Promise<number> =>
    Number((await db.query<{ n: string | null }>('SELECT max(seq) AS n FROM audit_events')).rows[0]!.n ?? 0);
  const head = await waitFor(
    'the projector to apply every stored event',
    async () => {
      const [s, a] = [await stored(), await applied()];
      return s === a ? a : -1;
    },
    { until: (n) => n >= 0 },
  );
  await db.query(
    `INSERT INTO audit_events (seq, commit_position, prepare_position, event_id, event_type, stream_name,
                               stream_revision, resource_type, resource_id, revision, internal, recorded_at,
                               recorded_hwm, actor_id, request_id, data)
     SELECT h.seq + g, h.commit_position + 1, h.prepare_position + g, gen_random_uuid(), 'IdAllocated',
            'sequence-bench-' || (g / 10000), g % 10000, NULL, NULL, g % 10000, true,
            h.recorded_hwm + g * interval '1 microsecond', h.recorded_hwm + g * interval '1 microsecond',
            NULL, NULL, jsonb_build_object('sequence', 'bench', 'id', g)
       FROM (SELECT * FROM audit_events ORDER BY seq DESC LIMIT 1) h, generate_series(1, $1::int) AS g`,
    [count],
  );
  return head + count;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Streamed {
  readonly lines: number;
  readonly seconds: number;
  /** Lines of the seeded events. */
  readonly seeded: number;
  /** Whether every line's position came after the line before it. */
  readonly ordered: boolean;
}

/**
 * GETs the export and reads it slowly (a pause after every 256 KB), checking each line as it comes;
 * `stopAfter` bytes, the client goes away.
 */
function readExport(
  url: string,
  options: { stopAfter?: number; onChunk?: () => void } = {},
): Promise<Streamed> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = http.get(
      url,
      { headers: { Authorization: `Token ${token}`, Accept: 'application/x-ndjson' } },
      (response) => {
        if (response.statusCode !== 200) {
          reject(new Error(`export answered ${response.statusCode}`));
          return;
        }
        let lines = 0;
        let rest = '';
        let bytes = 0;
        let sincePause = 0;
        let seeded = 0;
        let ordered = true;
        let previous: [bigint, bigint] = [-1n, -1n];
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          options.onChunk?.();
          bytes += Buffer.byteLength(chunk);
          const parts = (rest + chunk).split('\n');
          rest = parts.pop()!;
          for (const line of parts) {
            const entry = JSON.parse(line) as { position: string; type: string; data: { sequence?: string } };
            const [commit, prepare] = entry.position.split('.').map(BigInt) as [bigint, bigint];
            if (commit < previous[0] || (commit === previous[0] && prepare <= previous[1])) ordered = false;
            previous = [commit, prepare];
            if (entry.type === 'IdAllocated' && entry.data.sequence === 'bench') seeded++;
            lines++;
          }
          if (options.stopAfter !== undefined && bytes >= options.stopAfter) {
            request.destroy();
            resolve({ lines, seconds: (performance.now() - started) / 1000, seeded, ordered });
            return;
          }
          sincePause += Buffer.byteLength(chunk);
          if (sincePause >= 256 * 1024) {
            sincePause = 0;
            response.pause();
            setTimeout(() => response.resume(), 5);
          }
        });
        response.on('end', () => {
          if (rest !== '') reject(new Error(`a last line without its newline: ${rest.slice(0, 100)}`));
          else resolve({ lines, seconds: (performance.now() - started) / 1000, seeded, ordered });
        });
        response.on('error', reject);
      },
    );
    request.on('error', (error) => (options.stopAfter === undefined ? reject(error) : undefined));
  });
}

test('an export of 200,000 events in constant server memory, every line once', async () => {
  const env = await spawnedServiceEnv('export', scratchDir('catalogue-export-'), {
    ADMIN_EMAIL: STAFF.email,
    ADMIN_PASSWORD: STAFF.password,
    ADMIN_USERNAME: 'exportcurator',
  });
  service = await spawnAllInOne(env);
  db = new Client({ connectionString: env.DATABASE_URL });
  await db.connect();
  const api = client(service.url);
  const login = await api.post('/api/auth/login/', { json: STAFF });
  expect(login.status).toBe(200);
  token = login.body.token as string;

  const total = await seedAuditLog(db, SEEDED);
  const url = `${service.url}/api/audit/events/?include_internal=true`;
  // Warm up (code paths compiled, pool connections open), then the baseline.
  await readExport(`${url}&limit=1000`);
  const baseline = rssBytes(service.pid);
  let peak = baseline;
  let samples = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssBytes(service!.pid));
    samples++;
  }, 50);
  let streamed: Streamed;
  try {
    streamed = await readExport(url);
  } finally {
    clearInterval(sampler);
  }
  peak = Math.max(peak, rssBytes(service.pid));
  const growth = peak - baseline;
  process.stderr.write(
    `NDJSON export: ${streamed.lines} events in ${streamed.seconds.toFixed(1)} s ` +
      `(${Math.round(streamed.lines / streamed.seconds)} events/s through a slow reader); ` +
      `server RSS ${(baseline / 2 ** 20).toFixed(0)} MB, peak +${(growth / 2 ** 20).toFixed(1)} MB over ${samples} samples\n`,
  );
  // Every seeded event once, in order; besides them, what the service appended before the export.
  expect(streamed.seeded).toBe(SEEDED);
  expect(streamed.ordered).toBe(true);
  expect(streamed.lines).toBeGreaterThanOrEqual(total);
  expect(streamed.lines).toBeLessThanOrEqual(total + 5);
  expect(samples).toBeGreaterThan(5);
  expect(growth).toBeLessThan(MAX_GROWTH_BYTES);

  // The rate with a reader that only counts lines (reported, not asserted: the machine is shared).
  const fastStart = performance.now();
  const fast = await fetch(url, {
    headers: { Authorization: `Token ${token}`, Accept: 'application/x-ndjson' },
  });
  let fastLines = 0;
  for await (const chunk of fast.body as unknown as AsyncIterable<Uint8Array>)
    for (const byte of chunk) if (byte === 10) fastLines++;
  const fastSeconds = (performance.now() - fastStart) / 1000;
  process.stderr.write(`NDJSON export, counting reader: ${Math.round(fastLines / fastSeconds)} events/s\n`);
  expect(fastLines).toBeGreaterThanOrEqual(total);

  // Clients that go away mid-stream end their exports: the service answers on as before.
  for (let i = 0; i < 5; i++) await readExport(url, { stopAfter: 200_000 });
  const after = await readExport(`${url}&limit=10&after=0.0`);
  expect(after.lines).toBe(10);
  const health = await api.get('/health/');
  expect(health.status).toBe(200);
  // Connections of abandoned exports went back to the pool: none is left running a query.
  await waitFor(
    'no export query still running',
    async () =>
      Number(
        (
          await db!.query<{ n: string }>(
            `SELECT count(*) AS n FROM pg_stat_activity
              WHERE datname = current_database() AND state = 'active' AND query LIKE '%audit_events e%'
                AND pid <> pg_backend_pid()`,
          )
        ).rows[0]!.n,
      ),
    { timeoutMs: 10_000, intervalMs: 100, until: (n) => n === 0 },
  );
  await sleep(0);
}, 120_000);
