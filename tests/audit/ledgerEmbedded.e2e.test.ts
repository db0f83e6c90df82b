import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { client, newUser } from '#tests/support/httpClient';
import type { ServiceProcess } from '#tests/support/spawnService';
import {
  type ScriptRun,
  embeddedServiceForFile,
  postmasterPid,
  runOperatorScript,
} from '#tests/support/operatorTools';
import { waitFor } from '#tests/support/waitFor';

/**
 * verify-ledger as an operator runs it beside the all-in-one: no DATABASE_URL, the service's
 * embedded PostgreSQL found through DATA_DIR. It joins that server (the same postmaster keeps
 * serving), verifies the chain at the head the route answers, and its recorded run shows on the
 * service's /metrics/.
 */
const STAFF = { email: 'ledger-embedded@example.org', password: 'ledger-embedded-password' };
const embedded = embeddedServiceForFile('ledger-embedded', {
  PROCESSOR_ENABLED: 'false',
  ADMIN_EMAIL: STAFF.email,
  ADMIN_PASSWORD: STAFF.password,
});
const dataDir = (): string => embedded.dataDir();
const service = (): ServiceProcess => embedded.service();
const runScript = (env: Record<string, string>): Promise<ScriptRun> =>
  runOperatorScript('services/projector/verifyLedger.ts', env);

test('finds the running embedded PostgreSQL through DATA_DIR and verifies the ledger clean at its head', async () => {
  const api = client(service().url);
  await newUser(api);
  const login = await api.post('/api/auth/login/', { json: STAFF });
  expect(login.status).toBe(200);
  const token = login.body.token as string;
  const head = await api.get('/api/audit/ledger/', { token });
  expect(head.status).toBe(200);
  const postmaster = postmasterPid(dataDir());
  const run = await runScript({ DATA_DIR: dataDir() });
  expect(run).toEqual({
    code: 0,
    stdout: expect.stringMatching(/^ledger verified: \d+ events, head \d+\.\d+ [0-9a-f]{64}\n$/),
    stderr: '',
  });
  const [, count] = /^ledger verified: (\d+) events/.exec(run.stdout)!;
  expect(Number(count)).toBeGreaterThanOrEqual(head.body.count as number);
  // The same server, still serving; the run recorded where the service's metrics read it.
  expect(postmasterPid(dataDir())).toBe(postmaster);
  const metrics = await waitFor(
    'the verification on /metrics/',
    async () => (await api.get('/metrics/')).text,
    {
      timeoutMs: 10_000,
      intervalMs: 300,
      until: (text) => /^ledger_verification_last_success\{[^}]*\} 1$/m.test(text),
    },
  );
  const finished = /^ledger_verification_last_run_timestamp_seconds\{[^}]*\} (\S+)$/m.exec(metrics);
  expect(Math.abs(Number(finished![1]) - Date.now() / 1000)).toBeLessThan(60);
});

test('with no DATABASE_URL and no server on DATA_DIR it says so, starts nothing and exits 2', async () => {
  const empty = mkdtempSync(path.join(tmpdir(), 'catalogue-ledger-none-'));
  try {
    const run = await runScript({ DATA_DIR: empty });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`no PostgreSQL is running on DATA_DIR=${empty}`);
    expect(existsSync(path.join(empty, 'postgres'))).toBe(false);
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});
