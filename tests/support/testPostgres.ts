import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

export function serverUrl(): string {
  const url = process.env.TEST_PG_URL;
  if (!url)
    throw new Error('TEST_PG_URL is not set: run tests through jest (its globalSetup starts PostgreSQL)');
  return url;
}

/**
 * A fresh, empty database on the run's PostgreSQL (or on the server of `server`, a URL of one of
 * its databases): one per test file, so files never share state.
 */
export async function createTestDatabase(prefix = 't', server = serverUrl()): Promise<string> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: server });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`);
  } finally {
    await admin.end();
  }
  const url = new URL(server);
  url.pathname = `/${name}`;
  return url.toString();
}
