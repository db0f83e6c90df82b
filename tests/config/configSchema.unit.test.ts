import { ConfigError, loadConfig } from '#shared/config/config';

test('PORT is a port number, 0 (any free one) to 65535', () => {
  expect(loadConfig({}).port).toBe(8000);
  expect(loadConfig({ PORT: '0' }).port).toBe(0);
  expect(loadConfig({ PORT: '65535' }).port).toBe(65_535);
  expect(() => loadConfig({ PORT: '65536' })).toThrow(
    'configuration: PORT must be at most 65535, got "65536"',
  );
  expect(() => loadConfig({ PORT: 'http' })).toThrow(/PORT must be an integer from 0 to 65535/);
});

test('every bad variable is named at once, one per line', () => {
  const refused = (): unknown => loadConfig({ PORT: '-1', LOG_LEVEL: 'loud', S3_ENDPOINT: 'minio' });
  expect(refused).toThrow(ConfigError);
  expect(refused).toThrow(
    [
      'configuration: PORT must be an integer from 0 to 65535, got "-1"',
      'configuration: S3_ENDPOINT must be a URL, got "minio"',
      'configuration: LOG_LEVEL must be one of info, debug, warn, error, silent, got "loud"',
    ].join('\n'),
  );
});

test('an empty variable counts as unset', () => {
  const config = loadConfig({ PORT: '', LOG_LEVEL: '', HOST: '', S3_BUCKET: '' });
  expect(config).toMatchObject({ port: 8000, logLevel: 'info', host: '0.0.0.0' });
});

test('the S3 endpoint is taken apart once: host, port (else the scheme’s), TLS', () => {
  const keys = { S3_ACCESS_KEY: 'k', S3_SECRET_KEY: 's' };
  expect(loadConfig({ ...keys, S3_ENDPOINT: 'http://minio:9000' }).s3).toMatchObject({
    endPoint: 'minio',
    port: 9000,
    useSSL: false,
  });
  expect(loadConfig({ ...keys, S3_ENDPOINT: 'https://s3.example.org' }).s3).toMatchObject({
    endPoint: 's3.example.org',
    port: 443,
    useSSL: true,
  });
});

test('rate limits, trust proxy and the staff account keep their shapes', () => {
  const config = loadConfig({
    RATE_LIMIT_LOGIN: '5 / h',
    TRUST_PROXY: '2',
    ADMIN_EMAIL: 'root@example.org',
    ADMIN_PASSWORD: 'long enough',
  });
  expect(config.rateLimits.login).toEqual({ limit: 5, windowMs: 3_600_000 });
  expect(config.rateLimits.default).toEqual({ limit: 600, windowMs: 60_000 });
  expect(config.trustProxy).toBe(2);
  expect(config.admin).toEqual({ email: 'root@example.org', password: 'long enough', username: 'root' });
  expect(() => loadConfig({ ADMIN_EMAIL: 'root@example.org', ADMIN_PASSWORD: 'short' })).toThrow(
    'ADMIN_PASSWORD must have at least 8 characters',
  );
  expect(() => loadConfig({ RATE_LIMIT_UPLOAD: 'lots' })).toThrow(/RATE_LIMIT_UPLOAD must look like/);
});
