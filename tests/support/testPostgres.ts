import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

export function serverUrl(): string {
  const url = process.env.TEST_PG_URL;
  if (!url)
    throw new Error('TEST_PG_URL is not set: run tests through jest (its globalSetup starts PostgreSQL)');
  return url;
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
