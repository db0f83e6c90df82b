/**
 * A resumable upload to the service's tus endpoint (decisions.md "Resumable uploads"), with
 * tus-js-client's browser build (this module is its own chunk: only the "Add brain" page loads it).
 * The upload's URL is kept in localStorage under the file's fingerprint (name, type, size, last
 * change, endpoint), so choosing the same file again after a reload, a crash or a lost connection
 * resumes it where the service has it instead of sending it again.
 */
import { type PreviousUpload, Upload, canStoreURLs, defaultOptions } from 'tus-js-client';
import { ApiError, authHeaders } from './api';

export const TUS_ENDPOINT = '/api/file-uploads/tus/';
/** Bytes per PATCH: what a pause, a lost connection or a reload can cost at most. */
export const CHUNK_BYTES = 5 * 1024 * 1024;

export interface TusProgress {
  readonly loaded: number;
  readonly total: number;
}

export interface ResumableUpload {
  /** Where an earlier attempt of this file got to (bytes the service has), or 0 for a new upload. */
  readonly resumedFrom: number;
  /** Sends the rest; resolves with the file upload's id once the last byte is in. */
  readonly done: Promise<string>;
  /** Stops sending (what the service has stays; `resume` goes on from there). */
  pause(): Promise<void>;
  resume(): void;
}

/** The file upload's id: the last segment of its tus URL. */
const idOf = (url: string) =>
  decodeURIComponent(new URL(url, location.origin).pathname.split('/').filter(Boolean).pop() ?? '');

/** Starts (or resumes) sending `file`; `name` is the brain's name, kept with the upload. */
export async function startResumableUpload(
  file: File,
  name: string,
  onProgress: (progress: TusProgress) => void,
): Promise<ResumableUpload> {
  let resolve!: (id: string) => void;
  let reject!: (error: Error) => void;
  const done = new Promise<string>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  const upload = new Upload(file, {
    endpoint: TUS_ENDPOINT,
    chunkSize: CHUNK_BYTES,
    retryDelays: [0, 1000, 3000, 5000],
    metadata: { filename: file.name, ...(name ? { name } : {}) },
    storeFingerprintForResuming: canStoreURLs,
    removeFingerprintOnSuccess: true,
    // The token of the session as it is at each request (never a cookie).
    onBeforeRequest: (request) => {
      for (const [header, value] of Object.entries(authHeaders())) request.setHeader(header, value);
    },
    onProgress: (loaded, total) => onProgress({ loaded, total }),
    onSuccess: () => {
      if (upload.url) resolve(idOf(upload.url));
      else reject(new Error('the service named no upload URL'));
    },
    onError: (error) => reject(tusError(error)),
  });
  let resumedFrom = 0;
  if (canStoreURLs) {
    const previous: PreviousUpload[] = await upload.findPreviousUploads().catch(() => []);
    const newest = previous.sort((a, b) => b.creationTime.localeCompare(a.creationTime))[0];
    if (newest) {
      upload.resumeFromPreviousUpload(newest);
      resumedFrom = await offsetOf(newest.uploadUrl);
    }
  }
  if (resumedFrom > 0) onProgress({ loaded: resumedFrom, total: file.size });
  upload.start();
  return {
    resumedFrom,
    done,
    pause: () => upload.abort(),
    resume: () => upload.start(),
  };
}

/** Uploads of this browser that never finished (their files' names and sizes), newest first. */
export async function unfinishedUploads(): Promise<{ filename: string; size: number | null }[]> {
  if (!canStoreURLs) return [];
  const all = await defaultOptions.urlStorage.findAllUploads().catch(() => [] as PreviousUpload[]);
  return all
    .filter((u) => u.uploadUrl?.includes(TUS_ENDPOINT))
    .sort((a, b) => b.creationTime.localeCompare(a.creationTime))
    .map((u) => ({ filename: u.metadata.filename ?? 'a file', size: u.size }));
}

/** How many bytes the service holds of an earlier upload (0 when it is gone or not ours). */
async function offsetOf(url: string | null): Promise<number> {
  if (!url) return 0;
  try {
    const response = await fetch(url, {
      method: 'HEAD',
      headers: { 'Tus-Resumable': '1.0.0', ...authHeaders() },
      cache: 'no-store',
    });
    return response.ok ? Number(response.headers.get('Upload-Offset') ?? 0) : 0;
  } catch {
    return 0;
  }
}

/**
 * tus-js-client's error as the service said it: an ApiError whose fields are the form's (the file's
 * name is the form's "file"), or tus-js-client's own message when the service said nothing.
 */
function tusError(error: Error): Error {
  const response = (error as { originalResponse?: { getStatus(): number; getBody(): string } | null })
    .originalResponse;
  const body = response?.getBody();
  if (response && body) {
    try {
      const parsed = JSON.parse(body) as Record<string, unknown>;
      if (parsed && typeof parsed === 'object') {
        const { filename, ...rest } = parsed;
        return new ApiError(
          response.getStatus(),
          filename !== undefined ? { file: filename, ...rest } : rest,
        );
      }
    } catch {
      // not JSON: tus-js-client's own message below
    }
  }
  return new Error(`The upload was interrupted: ${error.message}`);
}
