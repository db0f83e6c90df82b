import type { CliContext } from '#cli/context';
import { CliError, ExitCode } from '#cli/exitCodes';

/** What the server's `OPTIONS /api/file-uploads/tus/` says it does (tus 1.0 discovery). */
export interface TusServer {
  readonly extensions: readonly string[];
  /** Upload-Checksum with sha256 is accepted (checksum extension). */
  readonly sha256: boolean;
  /** Upload-Length above this is refused at creation (Tus-Max-Size), when the server says. */
  readonly maxSize?: number;
}

const PROBE_TIMEOUT_MS = 30_000;
const probes = new WeakMap<CliContext, Promise<TusServer | undefined>>();

/**
 * The server's tus support, asked once per run; undefined for a server without tus (an older one:
 * uploads then go as one multipart POST). `BIC_UPLOAD_PROTOCOL=multipart` skips tus altogether.
 */
export function tusServer(ctx: CliContext, path: string): Promise<TusServer | undefined> {
  let probe = probes.get(ctx);
  if (!probe) {
    probe = ctx.env.BIC_UPLOAD_PROTOCOL === 'multipart' ? Promise.resolve(undefined) : discover(ctx, path);
    probes.set(ctx, probe);
  }
  return probe;
}

async function discover(ctx: CliContext, path: string): Promise<TusServer | undefined> {
  let response: Response;
  try {
    response = await fetch(ctx.api.url(path), {
      method: 'OPTIONS',
      headers: { 'Tus-Resumable': '1.0.0', 'User-Agent': ctx.api.options.userAgent },
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
  } catch (error) {
    const cause =
      error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    throw new CliError(`cannot reach ${ctx.server} (${cause})`, ExitCode.unavailable);
  }
  await response.body?.cancel();
  const versions = (response.headers.get('tus-version') ?? '').split(',').map((v) => v.trim());
  if (!response.ok || !versions.includes('1.0.0')) return undefined;
  const list = (name: string) =>
    (response.headers.get(name) ?? '')
      .split(',')
      .map((v) => v.trim().toLowerCase())
      .filter(Boolean);
  const extensions = list('tus-extension');
  const maxSize = Number(response.headers.get('tus-max-size') ?? '');
  return {
    extensions,
    sha256: extensions.includes('checksum') && list('tus-checksum-algorithm').includes('sha256'),
    maxSize: Number.isFinite(maxSize) && maxSize > 0 ? maxSize : undefined,
  };
}
