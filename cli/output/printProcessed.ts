import type { FileUpload } from '#cli/api/resources';
import type { CliContext } from '#cli/context';
import { printJson } from './printJson';

/** A completed upload: its metadata (or the whole record with --json). */
export function printProcessed(ctx: CliContext, upload: FileUpload, json: boolean): void {
  if (json) return printJson(ctx, upload);
  ctx.print(`${upload.name}: completed`);
  printJson(ctx, upload.metadata ?? {});
}
