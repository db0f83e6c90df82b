import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** Debian's python3 with python3-nibabel, -tifffile, -zarr and -numpy (installed by .ci/run). */
export const python = '/usr/bin/python3';

export const scriptsDir = __dirname;

/** Runs one of this folder's python scripts; stdout (JSON when it prints some) is returned. */
export async function runPython(script: string, args: readonly string[]): Promise<string> {
  if (!existsSync(python))
    throw new Error(
      `${python} is missing: install python3-nibabel python3-tifffile python3-zarr python3-numpy`,
    );
  const { stdout } = await promisify(execFile)(python, [join(scriptsDir, script), ...args], {
    maxBuffer: 64 * 2 ** 20,
    timeout: 120_000,
  });
  return stdout;
}

export async function pythonJson<T>(script: string, args: readonly string[]): Promise<T> {
  return JSON.parse(await runPython(script, args)) as T;
}
