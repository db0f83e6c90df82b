import { ConfigError, loadConfig } from '#shared/config/config';

const S3 = { S3_ENDPOINT: 'http://minio:9000', S3_ACCESS_KEY: 'k', S3_SECRET_KEY: 's' };

describe('S3 presigned downloads configuration', () => {
  test('off by default', () => {
    expect(loadConfig(S3).s3?.presignedDownloads).toBeUndefined();
  });

  test('S3_PRESIGNED_DOWNLOADS with an hour by default, signed for S3_PUBLIC_ENDPOINT when given', () => {
    expect(loadConfig({ ...S3, S3_PRESIGNED_DOWNLOADS: 'true' }).s3?.presignedDownloads).toEqual({
      expirySeconds: 3600,
      publicEndpoint: undefined,
    });
    const config = loadConfig({
      ...S3,
      S3_PRESIGNED_DOWNLOADS: '1',
      S3_PUBLIC_ENDPOINT: 'https://files.example.org',
      S3_PRESIGN_EXPIRY_SECONDS: '600',
    });
    expect(config.s3?.presignedDownloads).toEqual({
      expirySeconds: 600,
      publicEndpoint: { endPoint: 'files.example.org', port: 443, useSSL: true },
    });
  });

  test('refuses what cannot work', () => {
    expect(() => loadConfig({ S3_PRESIGNED_DOWNLOADS: 'true' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...S3, S3_PRESIGNED_DOWNLOADS: 'yes' })).toThrow(ConfigError);
    expect(() =>
      loadConfig({ ...S3, S3_PRESIGNED_DOWNLOADS: '1', S3_PRESIGN_EXPIRY_SECONDS: '604801' }),
    ).toThrow('at most 604800');
    expect(() => loadConfig({ ...S3, S3_PUBLIC_ENDPOINT: 'not a url' })).toThrow(ConfigError);
  });
});
