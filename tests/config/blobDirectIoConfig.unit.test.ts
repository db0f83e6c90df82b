import { ConfigError, loadConfig } from '#shared/config/config';

test('BLOB_DIRECT_IO is on unless turned off, and only takes a flag', () => {
  expect(loadConfig({}).blobDirectIo).toBe(true);
  expect(loadConfig({ BLOB_DIRECT_IO: '' }).blobDirectIo).toBe(true);
  expect(loadConfig({ BLOB_DIRECT_IO: 'false' }).blobDirectIo).toBe(false);
  expect(loadConfig({ BLOB_DIRECT_IO: '0' }).blobDirectIo).toBe(false);
  expect(loadConfig({ BLOB_DIRECT_IO: '1' }).blobDirectIo).toBe(true);
  expect(() => loadConfig({ BLOB_DIRECT_IO: 'direct' })).toThrow(ConfigError);
});
