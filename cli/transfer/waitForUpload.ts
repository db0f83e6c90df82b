import { setTimeout as sleep } from 'node:timers/promises';
import type { FileUpload } from '#cli/api/resources';
import type { CliContext } from '#cli/context';
import { CliError, ExitCode } from '#cli/exitCodes';

const FIRST_POLL_MS = 250;
const MAX_POLL_MS = 2000;

/**
 * Follows an upload's processing until it is completed or failed (polling its detail, backing off
 * to every 2 s). Fails with a one-line reason (exit 9) when processing failed, or on the timeout.
 */
export async function waitForUpload(
  ctx: CliContext,
  id: string,
  timeoutSeconds: number,
): Promise<FileUpload> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  let interval = FIRST_POLL_MS;
  for (;;) {
    const upload = await ctx.api.json<FileUpload>({
      method: 'GET',
      path: `/api/file-uploads/${encodeURIComponent(id)}/`,
    });
    if (upload.status === 'completed') return upload;
    if (upload.status === 'failed') {
      const reason = upload.metadata?.error;
      throw new CliError(
        `processing of ${upload.name} failed: ${typeof reason === 'string' ? reason : 'no reason given'}`,
        ExitCode.processingFailed,
      );
    }
    if (Date.now() + interval > deadline)
      throw new CliError(
        `upload ${id} is still ${upload.status} after ${timeoutSeconds} s (see \`bic uploads show ${id}\`)`,
        ExitCode.unavailable,
      );
    await sleep(interval);
    interval = Math.min(interval * 2, MAX_POLL_MS);
  }
}
