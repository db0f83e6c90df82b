import { S3Error } from 'minio';

/** The S3 error code of a failed minio call ("NoSuchKey", "NotFound", "InvalidRange"...), if any. */
export function s3ErrorCode(err: unknown): string | undefined {
  return err instanceof S3Error ? err.code : undefined;
}
