import { ConfigError, loadConfig } from '#shared/config/config';

test('the blob sweep is on by default: hourly, an hour for leftovers, a day for orphans', () => {
  expect(loadConfig({}).blobSweep).toEqual({
    enabled: true,
    intervalMs: 3_600_000,
    leftoverGraceMs: 3_600_000,
    orphanGraceMs: 86_400_000,
  });
});

test('BLOB_SWEEP_* set the sweep in seconds, or turn it off', () => {
  const config = loadConfig({
    BLOB_SWEEP_ENABLED: 'false',
    BLOB_SWEEP_INTERVAL_SECONDS: '60',
    BLOB_SWEEP_LEFTOVER_GRACE_SECONDS: '5',
    BLOB_SWEEP_ORPHAN_GRACE_SECONDS: '7200',
  });
  expect(config.blobSweep).toEqual({
    enabled: false,
    intervalMs: 60_000,
    leftoverGraceMs: 5_000,
    orphanGraceMs: 7_200_000,
  });
});

test.each([
  ['BLOB_SWEEP_ENABLED', 'sometimes'],
  ['BLOB_SWEEP_INTERVAL_SECONDS', '0'],
  ['BLOB_SWEEP_INTERVAL_SECONDS', '1h'],
  ['BLOB_SWEEP_LEFTOVER_GRACE_SECONDS', '0'],
  ['BLOB_SWEEP_ORPHAN_GRACE_SECONDS', '-5'],
  ['BLOB_SWEEP_ORPHAN_GRACE_SECONDS', '0'],
])('%s=%s stops start-up with a message naming it', (name, value) => {
  expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
  expect(() => loadConfig({ [name]: value })).toThrow(name);
});
