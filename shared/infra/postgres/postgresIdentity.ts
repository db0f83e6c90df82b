import { execFileSync } from 'node:child_process';

/** The uid/gid a child process is switched to. */
export interface ProcessIdentity {
  readonly uid: number;
  readonly gid: number;
}

const SYSTEM_USER = 'postgres';

function idOf(flag: '-u' | '-g'): number {
  return Number(
    execFileSync('id', [flag, SYSTEM_USER], { stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim(),
  );
}

/**
 * PostgreSQL refuses to run as root. As root, initdb and the postmaster run as the `postgres`
 * system user (created when missing); otherwise as ourselves (undefined: no switch).
 */
export function postgresIdentity(): ProcessIdentity | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    return { uid: idOf('-u'), gid: idOf('-g') };
  } catch {
    execFileSync('groupadd', ['--system', SYSTEM_USER]);
    execFileSync('useradd', ['--system', '--gid', SYSTEM_USER, '--no-create-home', SYSTEM_USER]);
    return { uid: idOf('-u'), gid: idOf('-g') };
  }
}
