import { rmSync, readFileSync, existsSync } from 'node:fs';
import type { RunningPostgres } from '../../shared/infra/postgres/embeddedPostgres';
import { TEST_PG_STATE_FILE } from './testPostgres';

export default async function globalTeardown(): Promise<void> {
  const pg = (globalThis as { __catalogueTestPg?: RunningPostgres }).__catalogueTestPg;
  await pg?.stop();
  if (existsSync(TEST_PG_STATE_FILE)) {
    const { root } = JSON.parse(readFileSync(TEST_PG_STATE_FILE, 'utf8')) as { root: string };
    rmSync(root, { recursive: true, force: true });
    rmSync(TEST_PG_STATE_FILE, { force: true });
  }
}
