import { mkdtempSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../../shared/infra/postgres/embeddedPostgres';
import { freePort } from './freePort';
import { TEST_PG_STATE_FILE } from './testPostgres';

/** Starts the one PostgreSQL this test run uses; globalTeardown stops it and removes its files. */
export default async function globalSetup(): Promise<void> {
  const root = mkdtempSync(path.join(tmpdir(), 'catalogue-test-pg-'));
  chmodSync(root, 0o777);
  const port = await freePort();
  const pg = await startEmbeddedPostgres({ dataDir: path.join(root, 'data'), port, persistent: false });
  const url = pg.connectionString('postgres');
  process.env.TEST_PG_URL = url;
  writeFileSync(TEST_PG_STATE_FILE, JSON.stringify({ url, root }));
  (globalThis as { __catalogueTestPg?: typeof pg }).__catalogueTestPg = pg;
}
