import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import type { CurrentUser, FileUpload } from '#cli/api/resources';
import { type CliContext, requireToken } from '#cli/context';
import { CliError, ExitCode } from '#cli/exitCodes';
import { type OverallProgress, overallProgress } from '#cli/output/overallProgress';
import { localFileSize } from './localFile';
import { multipartFileBody } from './multipartFileBody';
import { TUS_PATH, UploadInterrupted, tusUpload } from './tusUpload';
import { tusServer } from './tusServer';

/** One file to upload. */
export interface UploadRequest {
  readonly file: string;
  /** The upload's name (default: the file name). */
  readonly name?: string;
}

export type UploadResult =
  | {
      readonly file: string;
      readonly ok: true;
      /** The file upload record (GET /api/file-uploads/{id}/ once the last byte is in). */
      readonly upload: FileUpload;
      /** Bytes already on the server from an earlier run (tus resume); 0 for a fresh upload. */
      readonly resumedFrom: number;
      readonly size: number;
      readonly via: 'tus' | 'multipart';
    }
  | {
      readonly file: string;
      readonly ok: false;
      readonly error: CliError;
      /** Stopped by the signal (Ctrl-C): the next run of the same upload resumes it. */
      readonly interrupted: boolean;
    };

export interface UploadFilesOptions {
  /** Uploads at once (default 3). */
  readonly jobs?: number;
  /** The shared progress report (default: one for these files, on stderr). Files are `add`ed here. */
  readonly progress?: OverallProgress;
  /** Stops every upload without terminating it (Ctrl-C: see interruptSignal). */
  readonly signal?: AbortSignal;
  /** Called as each file ends, in the order they end (an import creates its brain right away). */
  readonly onResult?: (result: UploadResult) => void | Promise<void>;
  /** Bytes per tus PATCH (default 32 MiB; BIC_UPLOAD_CHUNK_MB overrides). */
  readonly chunkBytes?: number;
}

export const DEFAULT_JOBS = 3;

/**
 * Uploads files, `jobs` at once, through tus when the server speaks it (resuming what an earlier
 * run left unfinished), else as multipart POSTs. Never throws for one file: each result says what
 * happened, in the order of `requests`.
 */
export async function uploadFiles(
  ctx: CliContext,
  requests: readonly UploadRequest[],
  options: UploadFilesOptions = {},
): Promise<UploadResult[]> {
  requireToken(ctx);
  const ownProgress = options.progress === undefined;
  const progress =
    options.progress ??
    overallProgress({
      interactive: ctx.interactive,
      label: requests.length === 1 ? path.basename(requests[0]?.file ?? '') : undefined,
    });
  const results: UploadResult[] = new Array<UploadResult>(requests.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < requests.length; i = next++) {
      const request = requests[i] as UploadRequest;
      const result = await uploadOne(ctx, request, { ...options, progress });
      results[i] = result;
      await options.onResult?.(result);
    }
  };
  try {
    const jobs = Math.max(1, Math.min(options.jobs ?? DEFAULT_JOBS, requests.length));
    await Promise.all(Array.from({ length: jobs }, worker));
  } finally {
    if (ownProgress) progress.stop();
  }
  return results;
}

/** Uploads one file (reporting to `progress` under its path); never throws. */
export async function uploadOne(
  ctx: CliContext,
  request: UploadRequest,
  options: Omit<UploadFilesOptions, 'jobs' | 'onResult'> & { progress: OverallProgress },
): Promise<UploadResult> {
  const { file } = request;
  const key = path.resolve(file);
  let size: number | undefined;
  try {
    if (options.signal?.aborted) throw new UploadInterrupted(file);
    size = await localFileSize(file);
    options.progress.add(key, size);
    const server = await tusServer(ctx, TUS_PATH);
    if (server?.maxSize !== undefined && size > server.maxSize)
      throw new CliError(
        `${file} is larger than the server accepts (${server.maxSize} bytes)`,
        ExitCode.invalid,
      );
    let outcome: { upload: FileUpload; resumedFrom: number; via: 'tus' | 'multipart' };
    if (server) {
      const sent = await tusUpload(ctx, file, {
        name: request.name,
        chunkBytes: options.chunkBytes ?? chunkBytesFrom(ctx.env),
        onProgress: (bytes) => options.progress.update(key, bytes),
        signal: options.signal,
        user: await userOf(ctx),
        server,
      });
      outcome = { upload: await uploadRecord(ctx, sent.id), resumedFrom: sent.resumedFrom, via: 'tus' };
    } else {
      outcome = {
        upload: await multipartUpload(ctx, request, size, options),
        resumedFrom: 0,
        via: 'multipart',
      };
    }
    options.progress.finish(key, true);
    return { file, ok: true, size, ...outcome };
  } catch (error) {
    if (size !== undefined) options.progress.finish(key, false);
    const interrupted = error instanceof UploadInterrupted || options.signal?.aborted === true;
    return {
      file,
      ok: false,
      interrupted,
      error:
        error instanceof CliError
          ? error
          : new CliError(
              interrupted ? 'interrupted' : error instanceof Error ? error.message : String(error),
              ExitCode.failure,
            ),
    };
  }
}

/** BIC_UPLOAD_CHUNK_MB (1–1024), else the default. */
function chunkBytesFrom(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.BIC_UPLOAD_CHUNK_MB;
  if (raw === undefined || raw === '') return undefined;
  const mb = Number(raw);
  if (!Number.isFinite(mb) || mb <= 0 || mb > 1024)
    throw new CliError(`BIC_UPLOAD_CHUNK_MB must be a number of MiB from 1 to 1024: ${raw}`, ExitCode.usage);
  return Math.round(mb * 1024 * 1024);
}

const users = new WeakMap<CliContext, Promise<string>>();

/** The signed-in user's id (part of the resume fingerprint), asked once per run. */
function userOf(ctx: CliContext): Promise<string> {
  let user = users.get(ctx);
  if (!user) {
    user = ctx.api.json<CurrentUser>({ method: 'GET', path: '/api/auth/me/' }).then((me) => String(me.id));
    users.set(ctx, user);
  }
  return user;
}

/** The file upload a finished tus upload became (briefly retried while another instance catches up). */
async function uploadRecord(ctx: CliContext, id: string): Promise<FileUpload> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await ctx.api.json<FileUpload>({
        method: 'GET',
        path: `/api/file-uploads/${encodeURIComponent(id)}/`,
      });
    } catch (error) {
      if (!(error instanceof CliError) || error.exitCode !== ExitCode.notFound || attempt >= 10) throw error;
      await sleep(200 * (attempt + 1));
    }
  }
}

/** An older server's way: one multipart POST (restarted from the first byte on a retry). */
function multipartUpload(
  ctx: CliContext,
  request: UploadRequest,
  size: number,
  options: { progress: OverallProgress },
): Promise<FileUpload> {
  const key = path.resolve(request.file);
  let sent = 0;
  return ctx.api.json<FileUpload>({
    method: 'POST',
    path: '/api/file-uploads/',
    body: multipartFileBody(
      { name: request.name },
      { field: 'file', path: request.file, size },
      {
        start: (_total, done = 0) => {
          sent = done;
          options.progress.update(key, sent);
        },
        advance: (bytes) => {
          sent += bytes;
          options.progress.update(key, sent);
        },
        stop: () => undefined,
      },
    ),
    timeoutMs: null,
  });
}
