import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { ClientRequest } from 'node:http';
import path from 'node:path';
import {
  DefaultHttpStack,
  type DetailedError,
  type HttpRequest,
  type HttpResponse,
  type HttpStack,
  Upload,
} from 'tus-js-client';
import { errorForResponse } from '#cli/api/errorForResponse';
import type { CliContext } from '#cli/context';
import { CliError, ExitCode } from '#cli/exitCodes';
import type { TusServer } from './tusServer';
import { TusUrlStorage } from './tusUrlStorage';

export const TUS_PATH = '/api/file-uploads/tus/';
/** Big enough that a GiB file takes few round trips, small enough that a dropped one costs little. */
export const DEFAULT_CHUNK_BYTES = 32 * 1024 * 1024;
/** Waits between attempts; the count starts again whenever a chunk got through. */
const RETRY_DELAYS_MS = [0, 1000, 2000, 4000, 8000, 15_000, 30_000, 30_000, 30_000, 30_000];
/** A connection silent this long (no byte either way) is dropped and the chunk retried. */
const SOCKET_IDLE_MS = 120_000;
/** Statuses worth another attempt: offset conflicts (409, re-synced by HEAD), locks, limits, checksum. */
const RETRIED = new Set([408, 409, 423, 429, 460]);

export interface TusUploadOptions {
  /** Upload-Metadata `name` (the file upload's name; default: the file name). */
  readonly name?: string;
  readonly chunkBytes?: number;
  /** Bytes the server has of this file so far. */
  readonly onProgress?: (bytes: number) => void;
  /** Aborts without terminating: the upload stays on the server, to be resumed by the next run. */
  readonly signal?: AbortSignal;
  /** Who uploads (part of the resume fingerprint): the user id. */
  readonly user: string;
  readonly server: TusServer;
}

export interface TusUploadResult {
  /** The tus id, which is the file upload's id. */
  readonly id: string;
  /** The offset the upload resumed from (0 for a new one). */
  readonly resumedFrom: number;
}

/** Raised when the signal stopped an upload: it can be resumed by running the same upload again. */
export class UploadInterrupted extends Error {
  constructor(readonly file: string) {
    super(`upload of ${file} interrupted`);
    this.name = 'UploadInterrupted';
  }
}

/**
 * Uploads one file over tus 1.0 (tus-js-client), resuming an earlier unfinished upload of the same
 * file by the same user to the same server (its URL kept in the config directory), with a SHA-256
 * Upload-Checksum on every PATCH when the server offers it, and retries with backoff.
 */
export async function tusUpload(
  ctx: CliContext,
  file: string,
  options: TusUploadOptions,
): Promise<TusUploadResult> {
  const absolute = path.resolve(file);
  const info = await stat(absolute);
  const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  const fingerprint = [
    'bic-tus-1',
    absolute,
    info.size,
    Math.trunc(info.mtimeMs),
    ctx.server,
    options.user,
  ].join('\n');
  const storage = new TusUrlStorage(path.join(ctx.store.dir, 'uploads'));
  await storage.prune().catch(() => 0);
  const source = createReadStream(absolute);
  let resumedFrom: number | undefined;
  let attempt = 0;
  let expiryWrites: Promise<void> = Promise.resolve();

  return new Promise<TusUploadResult>((resolve, reject) => {
    const fail = (error: Error): void => {
      source.destroy();
      reject(error);
    };
    const upload = new Upload(source, {
      endpoint: ctx.api.url(TUS_PATH).href,
      chunkSize: chunkBytes,
      metadata: { filename: path.basename(file), ...(options.name ? { name: options.name } : {}) },
      headers: {
        Authorization: `Token ${ctx.api.options.token ?? ''}`,
        'User-Agent': ctx.api.options.userAgent,
      },
      fingerprint: () => Promise.resolve(fingerprint),
      urlStorage: storage,
      storeFingerprintForResuming: true,
      removeFingerprintOnSuccess: true,
      retryDelays: RETRY_DELAYS_MS,
      httpStack: idleTimeoutStack(SOCKET_IDLE_MS),
      onShouldRetry(error, retryAttempt) {
        const status = error.originalResponse?.getStatus() ?? 0;
        const retry = status === 0 || status >= 500 || RETRIED.has(status);
        if (retry && !options.signal?.aborted) {
          const delay = RETRY_DELAYS_MS[retryAttempt] ?? 0;
          attempt = retryAttempt + 1;
          ctx.notice(
            `${path.basename(file)}: ${status ? `server answered ${status}` : reasonOf(error)}; retrying${delay ? ` in ${Math.round(delay / 1000)} s` : ''} (attempt ${attempt})`,
          );
        }
        return retry;
      },
      async onBeforeRequest(req: HttpRequest) {
        if (req.getMethod() !== 'PATCH' || !options.server.sha256) return;
        const offset = Number(req.getHeader('Upload-Offset'));
        resumedFrom ??= offset;
        const end = Math.min(offset + chunkBytes, info.size);
        req.setHeader('Upload-Checksum', `sha256 ${await sha256Of(absolute, offset, end)}`);
      },
      onAfterResponse(req: HttpRequest, res: HttpResponse) {
        if (res.getStatus() >= 300) return;
        const offset = Number(res.getHeader('Upload-Offset') ?? NaN);
        if (req.getMethod() === 'HEAD') resumedFrom ??= Number.isNaN(offset) ? 0 : offset;
        // Kept only while unfinished: the entry goes once the last byte is in (onSuccess).
        const expires = res.getHeader('Upload-Expires');
        if (expires && offset !== info.size)
          expiryWrites = expiryWrites
            .then(() => storage.setExpiry(fingerprint, expires))
            .catch(() => undefined);
      },
      onProgress: (sent) => options.onProgress?.(sent),
      onSuccess() {
        source.destroy();
        const id = decodeURIComponent(
          new URL(upload.url ?? '').pathname.split('/').filter(Boolean).at(-1) ?? '',
        );
        // tus-js-client removes the entry too, without waiting: an expiry still being written could put it back.
        void expiryWrites
          .then(() => storage.removeUpload(TusUrlStorage.keyOf(fingerprint)))
          .then(
            () => resolve({ id, resumedFrom: resumedFrom ?? 0 }),
            () => resolve({ id, resumedFrom: resumedFrom ?? 0 }),
          );
      },
      onError: (error) =>
        fail(options.signal?.aborted ? new UploadInterrupted(file) : cliErrorOf(file, error)),
    });

    const onAbort = (): void => {
      void upload.abort(false).finally(() => fail(new UploadInterrupted(file)));
    };
    if (options.signal?.aborted) return fail(new UploadInterrupted(file));
    options.signal?.addEventListener('abort', onAbort, { once: true });

    upload
      .findPreviousUploads()
      .then((previous) => {
        const [last] = previous;
        if (last) upload.resumeFromPreviousUpload(last);
        if (!options.signal?.aborted) upload.start();
      })
      .catch((error: unknown) => fail(error instanceof Error ? error : new Error(String(error))));
  });
}

/** The SHA-256 (base64, as the checksum extension has it) of bytes [start, end) of a file. */
async function sha256Of(file: string, start: number, end: number): Promise<string> {
  const hash = createHash('sha256');
  if (end > start)
    for await (const chunk of createReadStream(file, { start, end: end - 1 })) hash.update(chunk as Buffer);
  return hash.digest('base64');
}

/** A refusal as the one line the user reads (the server's DRF body when it sent one). */
function cliErrorOf(file: string, error: Error | DetailedError): CliError {
  const detailed = error as Partial<DetailedError>;
  const response = detailed.originalResponse;
  if (response) {
    const status = response.getStatus();
    let body: unknown = response.getBody();
    try {
      body = JSON.parse(String(body)) as unknown;
    } catch {
      // not JSON: the text as it is
    }
    if (status === 460)
      return new CliError(
        `${file}: the server received bytes that do not match their SHA-256`,
        ExitCode.invalid,
      );
    return errorForResponse(status, body);
  }
  if (detailed.originalRequest)
    return new CliError(`cannot upload ${file}: ${reasonOf(error)}`, ExitCode.unavailable);
  return new CliError(`cannot upload ${file}: ${error.message}`, ExitCode.failure);
}

function reasonOf(error: Error): string {
  const cause = (error as Partial<DetailedError>).causingError;
  return cause?.message ?? error.message.replace(/^tus: /, '');
}

/**
 * tus-js-client's Node stack sets no timeout: a connection that goes silent (a dead link, a
 * stalled proxy) would hang forever. This one drops a request idle for `idleMs`, so it is retried.
 */
function idleTimeoutStack(idleMs: number): HttpStack {
  const inner = new DefaultHttpStack({});
  return {
    getName: () => 'bic-node',
    createRequest(method, url) {
      const request = inner.createRequest(method, url);
      const send = request.send.bind(request);
      request.send = (body: unknown) => {
        const sent = send(body);
        const underlying = request.getUnderlyingObject() as ClientRequest | null;
        underlying?.setTimeout(idleMs, () =>
          underlying.destroy(new Error(`no answer for ${Math.round(idleMs / 1000)} s`)),
        );
        return sent;
      };
      return request;
    },
  };
}
