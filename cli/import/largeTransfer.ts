import { stat } from 'node:fs/promises';
import type { CliContext } from '#cli/context';
import { CliError, ExitCode } from '#cli/exitCodes';
import { TUS_PATH, tusUpload } from '#cli/transfer/tusUpload';
import { tusServer } from '#cli/transfer/tusServer';

/** Files above this go through tus (resumable) when the server offers it; smaller ones as one multipart create. */
export const TUS_THRESHOLD_BYTES = 32 * 1024 * 1024;

/** The threshold of this run: BIC_IMPORT_TUS_ABOVE_MB (MiB; 0 sends every file through tus), else 32 MiB. */
export function tusThreshold(env: NodeJS.ProcessEnv): number {
  const text = env.BIC_IMPORT_TUS_ABOVE_MB;
  if (text === undefined || text.trim() === '') return TUS_THRESHOLD_BYTES;
  const mib = Number(text);
  if (!Number.isFinite(mib) || mib < 0)
    throw new CliError(
      `BIC_IMPORT_TUS_ABOVE_MB must be a number of MiB (0 or more), not ${text}`,
      ExitCode.usage,
    );
  return Math.floor(mib * 1024 * 1024);
}

/** Sends one large file through tus and answers its file upload id. */
export type LargeTransfer = (
  file: string,
  name: string,
  onProgress: (bytes: number) => void,
) => Promise<string>;

/**
 * Large files through tus, resumed across runs (tusUpload keeps its URLs in the config directory);
 * undefined when the server has no tus (or BIC_UPLOAD_PROTOCOL=multipart): every file then goes as
 * multipart.
 */
export async function largeTransfer(ctx: CliContext, user: number): Promise<LargeTransfer | undefined> {
  const server = await tusServer(ctx, TUS_PATH);
  if (!server) return undefined;
  return async (file, name, onProgress) => {
    if (server.maxSize !== undefined && (await stat(file)).size > server.maxSize)
      throw new CliError(`larger than the server accepts (${server.maxSize} bytes)`, ExitCode.invalid);
    const sent = await tusUpload(ctx, file, { name, onProgress, user: String(user), server });
    return sent.id;
  };
}
