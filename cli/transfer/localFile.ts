import { stat } from 'node:fs/promises';
import { CliError, ExitCode } from '#cli/exitCodes';

/** The size of a file to upload, or the one-line reason it cannot be. */
export async function localFileSize(file: string): Promise<number> {
  try {
    const info = await stat(file);
    if (info.isDirectory())
      throw new CliError(
        `${file} is a directory (a Zarr store is uploaded as a .zarr zip archive)`,
        ExitCode.failure,
      );
    if (!info.isFile()) throw new CliError(`${file} is not a regular file`, ExitCode.failure);
    return info.size;
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(`cannot read ${file}: ${(error as Error).message}`, ExitCode.failure);
  }
}
