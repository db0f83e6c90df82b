import { readFile } from 'node:fs/promises';
import { DEFAULT_CONTENT_TYPE } from '#shared/blobStore/defaultContentType';
import { isAbsentEntry } from './durableFs';

export interface BlobFileMeta {
  readonly contentType: string;
  readonly size: number;
  readonly sha256: string;
}

/** The sidecar's content type; a blob whose sidecar is gone is still served, as octet-stream. */
export async function readContentType(metaFile: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(metaFile, 'utf8');
  } catch (err) {
    if (isAbsentEntry(err)) return DEFAULT_CONTENT_TYPE;
    throw err;
  }
  const parsed = JSON.parse(text) as Partial<BlobFileMeta> | null;
  return typeof parsed?.contentType === 'string' ? parsed.contentType : DEFAULT_CONTENT_TYPE;
}
