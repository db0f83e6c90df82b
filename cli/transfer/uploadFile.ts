import path from 'node:path';
import type { CliContext } from '#cli/context';
import { transferProgress } from '#cli/output/transferProgress';
import { localFileSize } from './localFile';
import { multipartFileBody } from './multipartFileBody';

/** POSTs one file from disk as multipart (streamed, with a progress bar on a terminal). */
export async function uploadFile<T>(
  ctx: CliContext,
  apiPath: string,
  file: string,
  fields: Readonly<Record<string, string | undefined>>,
): Promise<T> {
  const size = await localFileSize(file);
  const progress = transferProgress(path.basename(file), ctx.interactive);
  try {
    return await ctx.api.json<T>({
      method: 'POST',
      path: apiPath,
      body: multipartFileBody(fields, { field: 'file', path: file, size }, progress),
      timeoutMs: null,
    });
  } finally {
    progress.stop();
  }
}
