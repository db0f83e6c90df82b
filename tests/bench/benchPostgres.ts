import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '#shared/infra/postgres/embeddedPostgres';
import { freePort } from '#tests/support/freePort';
import type { Cleanup } from './cleanup';

export interface BenchPostgres {
  /** A fresh database; returns its URL. */
  createDatabase(name: string): Promise<string>;
  readonly version: string;
  /** A scratch directory beside the cluster, removed with it. */
  readonly scratchDir: string;
  /** The postmaster's process id while it runs (for CPU accounting). */
  readonly postmasterPid: () => number | undefined;
}

/** A throw-away embedded PostgreSQL in a temp dir, removed by the cleanup stack. */
export async function startBenchPostgres(cleanup: Cleanup): Promise<BenchPostgres> {
  const root = mkdtempSync(path.join(tmpdir(), 'catalogue-bench-'));
  cleanup.defer('temp dir', () => rmSync(root, { recursive: true, force: true }));
  chmodSync(root, 0o755); // as root the cluster runs as `postgres`, which must reach its data dir
  const server = await startEmbeddedPostgres({
    dataDir: path.join(root, 'pg'),
    port: await freePort(),
    persistent: false,
  });
  cleanup.defer('PostgreSQL', () => server.stop());
  const admin = new pg.Client({ connectionString: server.connectionString('postgres') });
  await admin.connect();
  const { rows } = await admin
    .query<{ server_version: string }>('SHOW server_version')
    .finally(() => admin.end());
  return {
    version: `PostgreSQL ${rows[0]?.server_version ?? '?'}`,
    scratchDir: path.join(root, 'scratch'),
    postmasterPid: () => server.pid(),
    async createDatabase(name) {
      await server.createDatabase(name);
      return server.connectionString(name);
    },
  };
}
