import { rmSync } from 'node:fs';
import type { RunningPostgres } from '#shared/infra/postgres/embeddedPostgres';

export default async function globalTeardown(): Promise<void> {
  const pg = (globalThis as { __catalogueTestPg?: RunningPostgres }).__catalogueTestPg;
  await pg?.stop();
  if (process.env.TEST_PG_ROOT) rmSync(process.env.TEST_PG_ROOT, { recursive: true, force: true });
  const summary = (globalThis as { __catalogueSummaryLine?: string }).__catalogueSummaryLine;
  if (summary) process.stdout.write(`${summary}\n`);
}
