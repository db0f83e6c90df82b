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

/**
 * verify-projections as an operator runs it beside the all-in-one: no DATABASE_URL, the service's
 * embedded PostgreSQL found through DATA_DIR. The tool joins that server (it starts no second one)
 * and leaves it running; with no server on DATA_DIR it says so and exits 2.
 */
const embedded = embeddedServiceForFile('verify-embedded');
const dataDir = (): string => embedded.dataDir();
const service = (): ServiceProcess => embedded.service();
const runScript = (env: Record<string, string>): Promise<ScriptRun> =>
  runOperatorScript('services/projector/verifyProjections.ts', env);

test('finds the running all-in-one embedded PostgreSQL through DATA_DIR and verifies it clean', async () => {
  const api = client(service().url);
  await newUser(api);
  const postmaster = postmasterPid(dataDir());
  const run = await runScript({ DATA_DIR: dataDir() });
  expect({ code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({
    code: 0,
    stdout: expect.stringMatching(
      /^verify-projections: equal to a rebuild: \d+ table\(s\) of \d+ read model\(s\)/,
    ),
    stderr: expect.stringContaining(
      `verifying the read models of the embedded PostgreSQL of ${path.join(dataDir(), 'postgres')} (port `,
    ),
  });
  // The same server, still serving.
  expect(postmasterPid(dataDir())).toBe(postmaster);
  expect((await api.get('/health/')).status).toBe(200);
});

test('with no DATABASE_URL and no server on DATA_DIR it says so and exits 2', async () => {
  const empty = mkdtempSync(path.join(tmpdir(), 'catalogue-verify-none-'));
  try {
    const run = await runScript({ DATA_DIR: empty });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`no PostgreSQL is running on DATA_DIR=${empty}`);
    expect(existsSync(path.join(empty, 'postgres'))).toBe(false); // nothing was started there
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});
