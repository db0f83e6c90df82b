import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiClient, BodyFactory } from '#cli/api/apiClient';
import type { BufferedResponse } from '#cli/api/bufferedRequest';
import { errorForResponse } from '#cli/api/errorForResponse';
import { retryAfterSeconds, retryDelayMs } from '#cli/api/retryDelay';
import { CliError, ExitCode } from '#cli/exitCodes';
import type { TransferProgress } from '#cli/output/transferProgress';
import { multipartFileBody } from '#cli/transfer/multipartFileBody';
import type { PlannedScan } from './importPlan';

export interface CreatedBrain {
  readonly id: number;
  readonly readable_id: string;
  /** True when the server replayed an earlier run's create (Idempotent-Replayed). */
  readonly replayed: boolean;
}

const MAX_RATE_LIMITED = 8;
const MAX_TRANSIENT = 5;
const TRANSIENT = new Set([502, 503, 504]);

/**
 * POST /api/brains/ for one scan with the Idempotency-Key its key gives: the file as multipart, or
 * (`upload`) a file upload already sent through tus, as JSON. Network failures, 502-504 and 409
 * "still running" are retried with the same key, so an acknowledged create is replayed, never made
 * twice; 429 waits for Retry-After. Anything else is the API's refusal, as one line.
 */
export async function sendCreate(
  api: ApiClient,
  scan: PlannedScan,
  key: string,
  progress: TransferProgress,
  upload?: string,
  notice: (line: string) => void = () => undefined,
  /** The file's bytes when already read (a small file): sent as one buffer, not streamed from disk. */
  bytes?: Buffer,
): Promise<CreatedBrain> {
  const fields: Record<string, string | undefined> = {
    ...scan.fields,
    sidecar: scan.sidecar === undefined ? undefined : JSON.stringify(scan.sidecar),
  };
  const multipart =
    upload !== undefined
      ? undefined
      : bytes !== undefined
        ? bufferedMultipart(fields, path.basename(scan.file), bytes, progress)
        : multipartFileBody(fields, { field: 'file', path: scan.file, size: scan.size }, progress);
  const idempotencyKey = `bic-import-${upload === undefined ? 'm' : 't'}-${key}`;
  let rateLimited = 0;
  let transient = 0;
  for (;;) {
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'User-Agent': api.options.userAgent,
      'Idempotency-Key': idempotencyKey,
    };
    if (api.options.token) headers.Authorization = `Bearer ${api.options.token}`;
    let body: RequestInit['body'];
    if (multipart) {
      const made = multipart();
      Object.assign(headers, made.headers);
      body = made.body;
    } else {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(jsonBody(fields, upload!, scan.sidecar));
    }
    let response: Answer;
    try {
      response =
        typeof body === 'string' || body instanceof Uint8Array
          ? buffered(await api.sendBuffered(api.url('/api/brains/'), { method: 'POST', headers, body }))
          : fetched(
              await fetch(api.url('/api/brains/'), {
                method: 'POST',
                headers,
                body,
                ...(body instanceof ReadableStream
                  ? { duplex: 'half', redirect: 'error', window: null }
                  : {}),
              }),
            );
    } catch (error) {
      if (++transient > MAX_TRANSIENT) throw new CliError(reason(error, api.server), ExitCode.unavailable);
      await wait(
        retryDelayMs(transient, undefined),
        `${scan.relativePath}: ${reason(error, api.server)}; retrying`,
        notice,
      );
      continue;
    }
    if (response.status === 201 || response.status === 200) {
      const brain = JSON.parse(await response.text()) as { id: number; readable_id: string };
      return {
        id: brain.id,
        readable_id: brain.readable_id,
        replayed: response.header('idempotent-replayed') === 'true',
      };
    }
    const retryAfter = retryAfterSeconds(response.header('retry-after'));
    if (response.status === 429 && ++rateLimited <= MAX_RATE_LIMITED) {
      await response.discard();
      await wait(
        retryDelayMs(rateLimited, retryAfter ?? 1),
        `${scan.relativePath}: rate limited; retrying`,
        notice,
      );
      continue;
    }
    const stillRunning = response.status === 409 && retryAfter !== undefined;
    if ((TRANSIENT.has(response.status) || stillRunning) && ++transient <= MAX_TRANSIENT) {
      await response.discard();
      await wait(
        retryDelayMs(transient, retryAfter),
        `${scan.relativePath}: server answered ${response.status}; retrying`,
        notice,
      );
      continue;
    }
    const error = errorForResponse(response.status, await bodyOf(response));
    if (response.status === 422)
      throw new CliError(
        `${error.message} (this scan was sent before with other fields: import it with the fields of that run, or rename the file)`,
        error.exitCode,
      );
    throw error;
  }
}

/**
 * A small file's multipart body in one buffer (as multipartFileBody lays it out: the fields, then
 * the file): one write instead of a stream of chunks, for imports of many small scans.
 */
function bufferedMultipart(
  fields: Readonly<Record<string, string | undefined>>,
  filename: string,
  bytes: Buffer,
  progress: TransferProgress,
): BodyFactory {
  return () => {
    const boundary = `----bic${randomBytes(16).toString('hex')}`;
    const quoted = (text: string) => text.replace(/[\r\n]/g, ' ').replace(/"/g, '%22');
    const head =
      Object.entries(fields)
        .filter((entry): entry is [string, string] => entry[1] !== undefined)
        .map(
          ([name, value]) =>
            `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"\r\n\r\n${value}\r\n`,
        )
        .join('') +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${quoted(filename)}"; filename*=UTF-8''${encodeURIComponent(filename)}\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n';
    const body = Buffer.concat([Buffer.from(head), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]);
    progress.start(bytes.length);
    progress.advance(bytes.length);
    return { body, headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` } };
  };
}

/** The JSON create body: the form's text fields as their JSON types, the upload and the sidecar. */
function jsonBody(
  fields: Readonly<Record<string, string | undefined>>,
  upload: string,
  sidecar: Readonly<Record<string, unknown>> | undefined,
): Record<string, unknown> {
  const body: Record<string, unknown> = { upload };
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined || name === 'sidecar') continue;
    if (name === 'atlas' || name === 'category') body[name] = Number(value);
    else if (name === 'is_reference') body[name] = value === 'true';
    else body[name] = value;
  }
  if (sidecar !== undefined) body.sidecar = sidecar;
  return body;
}

async function wait(ms: number, why: string, notice: (line: string) => void): Promise<void> {
  notice(`${why} in ${Math.max(1, Math.round(ms / 1000))} s`);
  await sleep(Math.max(ms, 250));
}

function reason(error: unknown, server: string): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
  return `cannot reach ${server} (${cause})`;
}

/** What the loop needs of an answer, fetch's (a streamed body) or one read whole (sendBuffered). */
interface Answer {
  readonly status: number;
  /** A header's value, null when absent (as Headers.get gives it). */
  header(name: string): string | null;
  text(): Promise<string>;
  /** Lets go of a body that is not wanted. */
  discard(): Promise<void>;
}

function fetched(response: Response): Answer {
  return {
    status: response.status,
    header: (name) => response.headers.get(name),
    text: () => response.text(),
    discard: async () => {
      await response.body?.cancel();
    },
  };
}

/** UTF-8 as fetch's text() and json() decode it (a leading BOM dropped). */
const utf8 = new TextDecoder();

function buffered(response: BufferedResponse): Answer {
  return {
    status: response.status,
    header: (name) => {
      const value = response.headers[name];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    },
    text: () => Promise.resolve(utf8.decode(response.body)),
    discard: () => Promise.resolve(), // read whole already: its connection is free
  };
}

async function bodyOf(response: Answer): Promise<unknown> {
  const text = await response.text().catch(() => '');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
