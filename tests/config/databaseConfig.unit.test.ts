import { ConfigError, loadConfig } from '#shared/config/config';

test('without EMBEDDED_PG_PORT the embedded PostgreSQL gets a free port; with it, that port', () => {
  expect(loadConfig({}).embeddedPostgresPort).toBeUndefined();
  expect(loadConfig({ EMBEDDED_PG_PORT: '' }).embeddedPostgresPort).toBeUndefined();
  expect(loadConfig({ EMBEDDED_PG_PORT: '54329' }).embeddedPostgresPort).toBe(54329);
  expect(() => loadConfig({ EMBEDDED_PG_PORT: '70000' })).toThrow(/EMBEDDED_PG_PORT/);
  expect(() => loadConfig({ EMBEDDED_PG_PORT: 'any' })).toThrow(ConfigError);
});

test('MIGRATION_DATABASE_URL is an optional owner URL beside DATABASE_URL', () => {
  const app = 'postgres://app:secret@db:5432/catalogue';
  const owner = 'postgres://owner:secret@db:5432/catalogue';
  expect(loadConfig({ DATABASE_URL: app }).migrationDatabaseUrl).toBeUndefined();
  expect(loadConfig({ DATABASE_URL: app, MIGRATION_DATABASE_URL: owner }).migrationDatabaseUrl).toBe(owner);
  expect(() => loadConfig({ MIGRATION_DATABASE_URL: owner })).toThrow(
    /MIGRATION_DATABASE_URL needs DATABASE_URL/,
  );
  expect(() => loadConfig({ DATABASE_URL: app, MIGRATION_DATABASE_URL: 'owner@db' })).toThrow(
    /MIGRATION_DATABASE_URL must be a URL/,
  );
});
