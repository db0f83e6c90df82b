import type { Hash } from 'node:crypto';
import { constants, createWriteStream } from 'node:fs';
import { access, rename, rm, stat, truncate } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { CliContext } from '#cli/context';
import { CliError, ExitCode } from '#cli/exitCodes';
import { transferProgress } from '#cli/output/transferProgress';
import { dispositionFilename } from './contentDisposition';
import { PartialDownload } from './partialDownload';

export interface DownloadOptions {
  /** Where to write; default: the name the server offers, in the current directory. */
  readonly output?: string;
  readonly force?: boolean;
  readonly fallbackName: string;
}

export interface DownloadResult {
  readonly file: string;
  readonly bytes: number;
  readonly resumedFrom: number;
  readonly verified: boolean;
}

/** An ETag that is a quoted SHA-256 (what the service sends): the bytes can be checked against it. */
const SHA256_ETAG = /^"([0-9a-f]{64})"$/;

/**
 * Streams a file to disk. An earlier interrupted run's bytes are kept in `<file>.part` and resumed
 * with `Range` + `If-Range` (the ETag they came with): a 206 appends, a 200 (content changed, or no
 * range support) starts over. The SHA-256 is checked when the ETag carries it; a mismatch removes
 * the bytes and fails with exit 10.
 */
export async function downloadFile(ctx: CliContext, apiPath: string, options: DownloadOptions) {
  let partial = options.output === undefined ? undefined : await claimTarget(options.output, options.force);
  let response = await request(ctx, apiPath, partial);
  if (partial === undefined) {
    const offered = dispositionFilename(response.headers.get('content-disposition')) ?? options.fallbackName;
    partial = await claimTarget(offered, options.force);
    // The name was learnt from this response: resume from earlier bytes of the same content instead.
    if ((await partial.size()) > 0 && (await partial.etag()) === response.headers.get('etag')) {
      await response.body?.cancel();
      response = await request(ctx, apiPath, partial);
    }
  }
  return receive(ctx, response, partial, apiPath);
}

async function claimTarget(file: string, force: boolean | undefined): Promise<PartialDownload> {
  const exists = await stat(file).then(
    () => true,
    () => false,
  );
  if (exists && !force) throw new CliError(`${file} already exists (--force to overwrite)`, ExitCode.failure);
  const dir = path.dirname(path.resolve(file));
  await access(dir, constants.W_OK).catch(() => {
    throw new CliError(`cannot write to ${dir}`, ExitCode.failure);
  });
  return new PartialDownload(path.resolve(file));
}

async function request(ctx: CliContext, apiPath: string, partial: PartialDownload | undefined) {
  const have = partial ? await partial.size() : 0;
  const etag = partial ? await partial.etag() : undefined;
  const headers: Record<string, string> = { Accept: '*/*' };
  if (have > 0) {
    headers.Range = `bytes=${have}-`;
    // Without a strong ETag the old bytes cannot be tied to this content: ask for all of it.
    if (etag && !etag.startsWith('W/')) headers['If-Range'] = etag;
    else delete headers.Range;
  }
  return ctx.api.send({ method: 'GET', path: apiPath, headers, timeoutMs: null, accept: [416] });
}

async function receive(ctx: CliContext, response: Response, partial: PartialDownload, apiPath: string) {
  const etag = response.headers.get('etag');
  let offset = 0;
  if (response.status === 416) {
    // Our .part is not a prefix of this content (or already whole): start over, once.
    await response.body?.cancel();
    await partial.discard();
    return receive(ctx, await request(ctx, apiPath, partial), partial, apiPath);
  }
  if (response.status === 206) offset = rangeStart(response.headers.get('content-range'));
  const have = await partial.size();
  if (response.status === 206 && offset !== have)
    throw new CliError(`the server resumed at byte ${offset}, not ${have}`, ExitCode.failure);
  if (response.status !== 206) await partial.remember(etag);
  if (response.status !== 206 && have > 0) await truncate(partial.partFile, 0);
  const expected = SHA256_ETAG.exec(etag ?? '')?.[1];
  const hash = expected ? await partial.hashOfPrefix(offset) : undefined;
  const length = Number(response.headers.get('content-length') ?? NaN);
  const progress = transferProgress(path.basename(partial.target), ctx.interactive);
  if (!Number.isNaN(length)) progress.start(offset + length, offset);
  try {
    await pipeline(
      Readable.fromWeb(response.body as WebReadableStream<Uint8Array>),
      tap(hash, (n) => progress.advance(n)),
      createWriteStream(partial.partFile, { flags: offset > 0 ? 'a' : 'w', mode: 0o644 }),
    );
  } catch (error) {
    const reason =
      error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
    throw new CliError(`the download was interrupted (${reason}); rerun to resume`, ExitCode.unavailable);
  } finally {
    progress.stop();
  }
  const bytes = await partial.size();
  if (!Number.isNaN(length) && bytes !== offset + length)
    throw new CliError(
      `the download ended after ${bytes} bytes of ${offset + length}; rerun to resume`,
      ExitCode.unavailable,
    );
  if (expected && hash && hash.digest('hex') !== expected) {
    await partial.discard();
    throw new CliError(
      `${partial.target}: SHA-256 does not match the server's; the bytes were removed`,
      ExitCode.integrity,
    );
  }
  await rm(partial.target, { force: true });
  await rename(partial.partFile, partial.target);
  await partial.remember(null);
  return { file: partial.target, bytes, resumedFrom: offset, verified: expected !== undefined };
}

/** `bytes 100-199/200` → 100. */
function rangeStart(header: string | null): number {
  const start = /^bytes (\d+)-\d+\/(?:\d+|\*)$/.exec(header ?? '')?.[1];
  if (start === undefined) throw new CliError(`unexpected Content-Range: ${header}`, ExitCode.failure);
  return Number(start);
}

function tap(hash: Hash | undefined, advance: (bytes: number) => void): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash?.update(chunk);
      advance(chunk.length);
      done(null, chunk);
    },
  });
}
