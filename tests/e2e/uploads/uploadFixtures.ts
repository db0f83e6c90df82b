import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '#tests/support/httpClient';
import { handleCommand } from '#shared/commandHandling/handleCommand';
import { createLocalDiskBlobStore } from '#shared/blobStore/localDisk/createLocalDiskBlobStore';
import { createPostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import { type UploadCommand, decideUpload } from '#shared/domain/uploads/decide';
import {
  type UploadState,
  uploadDecider,
  uploadPreviewKey,
  uploadStreamName,
} from '#shared/domain/uploads/events';
import { Readable } from 'node:stream';

/** A multipart form with `file` (and any text fields). */
export function uploadForm(filename: string, bytes: Buffer, fields: Record<string, string> = {}): FormData {
  const data = new FormData();
  for (const [k, v] of Object.entries(fields)) data.append(k, v);
  data.append('file', new Blob([bytes], { type: 'application/octet-stream' }), filename);
  return data;
}

export function upload(
  api: Client,
  token: string,
  filename: string,
  bytes: Buffer,
  fields: Record<string, string> = {},
  headers: Record<string, string> = {},
) {
  return api.post('/api/file-uploads/', { token, body: uploadForm(filename, bytes, fields), headers });
}

/** Every file under the local-disk store's uploads/ (data, sidecars and temp files alike). */
export function filesUnder(dataDir: string, folder = 'uploads'): string[] {
  const dir = path.join(dataDir, 'blobs', folder);
  if (!existsSync(dir)) return [];
  return readdirSync(dir);
}

/** Bytes that differ at every offset a range test looks at. */
export function patternBytes(size: number): Buffer {
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 7 + (i >> 8)) & 0xff;
  return bytes;
}

/** How long the upload tests wait for something in the background (generous: the machine may be loaded). */
export const UPLOAD_WAIT = { timeoutMs: 20_000, intervalMs: 50 };

const ctx = { actor: 'processor', requestId: 'test', correlationId: 'test', causationId: null };

/**
 * Plays the processor for an upload (the processor service is another branch's work): claims it,
 * then either stores `preview` as its PNG and completes with `metadata`, or fails with `reason`.
 */
export async function finishProcessing(
  databaseUrl: string,
  dataDir: string,
  uploadId: string,
  outcome: { metadata: { format: string } & Record<string, unknown>; preview?: Buffer } | { reason: string },
): Promise<void> {
  const store = createPostgresEventStore({ connectionString: databaseUrl, poolSize: 1 });
  const stream = uploadStreamName(uploadId);
  const decide = (command: UploadCommand) =>
    handleCommand(store, stream, uploadDecider, (state: UploadState) => decideUpload(command, state), ctx);
  try {
    const now = new Date().toISOString();
    const lease = new Date(Date.now() + 60_000).toISOString();
    await decide({
      type: 'ClaimUpload',
      data: { processorId: 'test', now, leaseUntil: lease, maxAttempts: 3 },
    });
    if ('reason' in outcome) {
      await decide({ type: 'FailProcessing', data: { attempt: 1, reason: outcome.reason, now } });
      return;
    }
    let previewBlobKey: string | null = null;
    if (outcome.preview) {
      previewBlobKey = uploadPreviewKey(uploadId);
      const blobs = createLocalDiskBlobStore({ rootDir: path.join(dataDir, 'blobs') });
      await blobs.put(previewBlobKey, Readable.from([outcome.preview]), { contentType: 'image/png' });
    }
    await decide({
      type: 'CompleteProcessing',
      data: { attempt: 1, metadata: outcome.metadata, previewBlobKey, now },
    });
  } finally {
    await store.close();
  }
}
