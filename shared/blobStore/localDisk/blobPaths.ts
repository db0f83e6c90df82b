import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { assertValidBlobKey } from '#shared/blobStore/blobKey';

/**
 * Where a key lives under the root directory. '~' cannot appear in a key, so the sidecar and the
 * temp files, whose names contain it, never collide with another key's file.
 */
export interface BlobPaths {
  readonly dir: string;
  readonly data: string;
  /** JSON sidecar holding the content type (no xattrs: they are not portable across filesystems). */
  readonly meta: string;
}

export const META_SUFFIX = '~meta.json';

export function blobPaths(rootDir: string, key: string): BlobPaths {
  assertValidBlobKey(key);
  const data = path.join(rootDir, ...key.split('/'));
  return { dir: path.dirname(data), data, meta: `${data}${META_SUFFIX}` };
}

/** Temp files sit next to their target so the final rename stays on one filesystem (atomic). */
export function tempPathFor(file: string): string {
  return `${file}~${randomBytes(8).toString('hex')}.tmp`;
}

/** A temp file of a put (of its data or its sidecar); one left behind is a leftover for the sweep. */
export const TEMP_FILE_PATTERN = /~[0-9a-f]{16}\.tmp$/;
