import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { NewEvent } from '#shared/eventStore/eventStore';
import { createLogger, type Logger } from '#shared/logging/logger';
import { ProjectionRunner } from '#shared/projections/projectionRunner';
import { startLedgerHeadLog } from '#services/projector/ledgerHeadLog';
import { ledgerProjection } from '#services/projector/projections/ledgerProjection';
import { client } from '#tests/support/httpClient';
import { eventStoreDatabase } from '#tests/support/eventStoreDatabase';
import { spawnedServiceEnv } from '#tests/support/serviceEnv';
import { spawnAllInOne, type ServiceProcess } from '#tests/support/spawnService';
import { waitFor } from '#tests/support/waitFor';
import { newUser } from '#tests/support/httpClient';

/**
 * The ledger head logged outside the database: by the real all-in-one process on its output, at
 * start once caught up and then at LEDGER_HEAD_LOG_INTERVAL_SECONDS, equal to what the route says;
 * and by the head log itself only while its process leads, never with an interval of 0.
 */
interface HeadLine {
  readonly msg: string;
  readonly position: string | null;
  readonly count: number;
  readonly hash: string;
  readonly algorithm: string;
}

const headLines = (output: string): HeadLine[] =>
  output
    .split('\n')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as HeadLine];
      } catch {
        return [];
      }
    })
    .filter((record) => record.msg === 'ledger head');

describe('the all-in-one process', () => {
  const STAFF = { email: 'ledger-keeper@example.org', password: 'ledger-keeper-password' };
  let service: ServiceProcess | undefined;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'catalogue-ledger-log-'));
    service = await spawnAllInOne(
      await spawnedServiceEnv('ledger_log', dataDir, {
        LOG_LEVEL: 'info',
        LEDGER_HEAD_LOG_INTERVAL_SECONDS: '1',
        PROCESSOR_ENABLED: 'false',
        ADMIN_EMAIL: STAFF.email,
        ADMIN_PASSWORD: STAFF.password,
      }),
      90_000, // loading the service's sources through tsx takes long on a busy machine
    );
  }, 120_000);
  afterAll(async () => {
    await service?.kill();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('logs the ledger head at start and every interval; the latest line is the head the route answers', async () => {
    const api = client(service!.url);
    const first = await waitFor(
      'a first ledger head line',
      () => Promise.resolve(headLines(service!.output())),
      {
        timeoutMs: 20_000,
        intervalMs: 100,
        until: (lines) => lines.length > 0,
      },
    );
    expect(first[0]).toMatchObject({ algorithm: 'sha256', hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    await newUser(api);
    const login = await api.post('/api/auth/login/', { json: STAFF });
    expect(login.status).toBe(200);
    const token = login.body.token as string;
    // A later line shows the new head (the user registered, the staff logged in): read both until
    // a line matches the route's answer exactly.
    const { head, lines } = await waitFor(
      'a ledger head line equal to the head the route answers',
      async () => {
        const answer = await api.get('/api/audit/ledger/', { token });
        expect(answer.status).toBe(200);
        return { head: answer.body as HeadLine, lines: headLines(service!.output()) };
      },
      {
        timeoutMs: 20_000,
        intervalMs: 300,
        until: ({ head: h, lines: found }) =>
          found.some(
            (line) => line.count === h.count && line.hash === h.hash && line.position === h.position,
          ),
      },
    );
    expect(head.count).toBeGreaterThan(first[0]!.count);
    expect(lines.length).toBeGreaterThanOrEqual(2);
  });
});

describe('the head log', () => {
  const db = eventStoreDatabase('ledger_head_log');
  const noted = (): NewEvent => ({
    id: randomUUID(),
    type: 'Noted',
    data: { n: 1 },
    metadata: {
      actor: 'system',
      requestId: null,
      correlationId: randomUUID(),
      causationId: null,
      schemaVersion: 1,
    },
  });

  /** A logger that keeps its lines. */
  function keptLog(): { logger: Logger; heads: () => HeadLine[] } {
    const lines: string[] = [];
    const logger = createLogger({ service: 'test', level: 'info', sink: (line) => lines.push(line) });
    return { logger, heads: () => headLines(lines.join('\n')) };
  }

  beforeAll(async () => {
    const { position } = await db.store.appendToStream('notes-1', [noted(), noted(), noted()]);
    // The store's head is its newest readable event, and an open transaction anywhere on the server
    // (the parallel suite's) can hold new ones back for a moment: start once they are readable.
    await db.readable(position);
  });

  test('waits for the ledger to catch up with the store, logs it, and then at each interval', async () => {
    const { logger, heads } = keptLog();
    const log = startLedgerHeadLog({
      pool: db.pool,
      store: db.store,
      logger,
      intervalSeconds: 1,
      leading: () => true,
    });
    try {
      // Nothing chained yet: the ledger is behind the store's head, so no line.
      await new Promise((r) => setTimeout(r, 1500));
      expect(heads()).toEqual([]);
      await new ProjectionRunner({
        store: db.store,
        pool: db.pool,
        projections: [ledgerProjection],
      }).catchUp();
      const lines = await waitFor('two head lines', () => Promise.resolve(heads()), {
        timeoutMs: 10_000,
        intervalMs: 100,
        until: (found) => found.length >= 2,
      });
      const { rows } = await db.pool.query<{ hash: Buffer }>('SELECT hash FROM ledger WHERE seq = 3');
      const all = await db.store.readAll();
      for (const line of lines)
        expect(line).toEqual(
          expect.objectContaining({
            position: `${all[2]!.position.commit}.${all[2]!.position.prepare}`,
            count: 3,
            hash: rows[0]!.hash.toString('hex'),
            algorithm: 'sha256',
          }),
        );
    } finally {
      log.stop();
    }
  });

  test('logs nothing while its process does not lead, nor with an interval of 0', async () => {
    const standby = keptLog();
    const disabled = keptLog();
    const logs = [
      startLedgerHeadLog({
        pool: db.pool,
        store: db.store,
        logger: standby.logger,
        intervalSeconds: 1,
        leading: () => false,
      }),
      startLedgerHeadLog({
        pool: db.pool,
        store: db.store,
        logger: disabled.logger,
        intervalSeconds: 0,
        leading: () => true,
      }),
    ];
    try {
      await new Promise((r) => setTimeout(r, 2500));
      expect([standby.heads(), disabled.heads()]).toEqual([[], []]);
    } finally {
      for (const log of logs) log.stop();
    }
  });
});
