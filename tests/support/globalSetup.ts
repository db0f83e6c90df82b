import { mkdtempSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '#shared/infra/postgres/embeddedPostgres';
import { freePort } from './freePort';

/**
 * Starts the one PostgreSQL this test run uses. Its URL reaches the test workers through the
 * environment (they are spawned after this runs), so parallel jest runs never share a server.
 */
export default async function globalSetup(): Promise<void> {
  const root = mkdtempSync(path.join(tmpdir(), 'catalogue-test-pg-'));
  chmodSync(root, 0o755);
  const port = await freePort();
  const pg = await startEmbeddedPostgres({ dataDir: path.join(root, 'data'), port, persistent: false });
  process.env.TEST_PG_URL = pg.connectionString('postgres');
  process.env.TEST_PG_ROOT = root;
  (globalThis as { __catalogueTestPg?: typeof pg }).__catalogueTestPg = pg;
}
