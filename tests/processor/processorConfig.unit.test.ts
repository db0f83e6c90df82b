import { availableParallelism, totalmem } from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '#shared/config/config';

test("processor defaults: a dead processor's claim taken over within 15 s, one core left to requests, up to 3 slots for small uploads, 20 s + 300 s per GiB up to 600 s", () => {
  expect(loadConfig({}, '/srv').processor).toEqual({
    enabled: true,
    leaseSeconds: 15,
    concurrency: Math.max(1, availableParallelism() - 1),
    smallUploadSlots: Math.max(1, Math.min(3, Math.floor(totalmem() / 1024 ** 3))),
    smallUploadMaxBytes: 8 * 1024 * 1024,
    timeoutSeconds: 600,
    timeoutBaseSeconds: 20,
    timeoutPerGibSeconds: 300,
    maxAttempts: 3,
    workerMemoryMb: 512,
    workerNice: 10,
    inspectorModule: undefined,
  });
});

test('processor settings come from PROCESSOR_* variables', () => {
  const config = loadConfig(
    {
      PROCESSOR_ENABLED: 'false',
      PROCESSOR_LEASE_SECONDS: '5',
      PROCESSOR_CONCURRENCY: '4',
      PROCESSOR_SMALL_UPLOAD_SLOTS: '0',
      PROCESSOR_SMALL_UPLOAD_MB: '2',
      PROCESSOR_TIMEOUT_SECONDS: '30',
      PROCESSOR_TIMEOUT_BASE_SECONDS: '5',
      PROCESSOR_TIMEOUT_PER_GIB_SECONDS: '0',
      PROCESSOR_MAX_ATTEMPTS: '1',
      PROCESSOR_WORKER_MEMORY_MB: '64',
      PROCESSOR_NICE: '19',
      PROCESSOR_INSPECTOR_MODULE: 'tests/inspector.ts',
    },
    '/srv',
  );
  expect(config.processor).toEqual({
    enabled: false,
    leaseSeconds: 5,
    concurrency: 4,
    smallUploadSlots: 0,
    smallUploadMaxBytes: 2 * 1024 * 1024,
    timeoutSeconds: 30,
    timeoutBaseSeconds: 5,
    timeoutPerGibSeconds: 0,
    maxAttempts: 1,
    workerMemoryMb: 64,
    workerNice: 19,
    inspectorModule: path.resolve('/srv', 'tests/inspector.ts'),
  });
});

test('the time limit base may not exceed the cap; the default base gives way to a lower cap', () => {
  const env = { PROCESSOR_TIMEOUT_SECONDS: '30', PROCESSOR_TIMEOUT_BASE_SECONDS: '31' };
  expect(() => loadConfig(env)).toThrow(/PROCESSOR_TIMEOUT_BASE_SECONDS.*PROCESSOR_TIMEOUT_SECONDS/);
  expect(loadConfig({ PROCESSOR_TIMEOUT_SECONDS: '10' }).processor).toMatchObject({
    timeoutSeconds: 10,
    timeoutBaseSeconds: 20,
  });
});

test.each([
  ['PROCESSOR_LEASE_SECONDS', '0'],
  ['PROCESSOR_CONCURRENCY', '0'],
  ['PROCESSOR_MAX_ATTEMPTS', 'many'],
  ['PROCESSOR_WORKER_MEMORY_MB', '16'],
  ['PROCESSOR_ENABLED', 'maybe'],
  ['PROCESSOR_NICE', '20'],
  ['PROCESSOR_NICE', '-5'],
  ['PROCESSOR_SMALL_UPLOAD_SLOTS', '-1'],
  ['PROCESSOR_SMALL_UPLOAD_MB', '0.5'],
  ['PROCESSOR_TIMEOUT_BASE_SECONDS', '0'],
  ['PROCESSOR_TIMEOUT_PER_GIB_SECONDS', 'lots'],
])('%s=%s stops start-up with a message naming it', (name, value) => {
  expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
  expect(() => loadConfig({ [name]: value })).toThrow(name);
});
