import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

export const TEST_PG_STATE_FILE = path.join(tmpdir(), `catalogue-test-pg-${process.env.JEST_RUN_ID ?? 'run'}.json`);

function serverUrl(): string {
  if (process.env.TEST_PG_URL) return process.env.TEST_PG_URL;
  return (JSON.parse(readFileSync(TEST_PG_STATE_FILE, 'utf8')) as { url: string }).url;
}

/** A fresh, empty database on the run's PostgreSQL: one per test file, so files never share state. */
export async function createTestDatabase(prefix = 't'): Promise<string> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: serverUrl() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl());
  url.pathname = `/${name}`;
  return url.toString();
}
