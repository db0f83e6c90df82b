import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chown, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ProcessIdentity } from './postgresIdentity';

export interface InitialiseOptions {
  readonly initdb: string;
  readonly dataDir: string;
  readonly superuser: string;
  readonly password: string;
  readonly identity: ProcessIdentity | undefined;
  readonly onLog?: (line: string) => void;
}

/**
 * Creates a new cluster in `dataDir` whose every connection (TCP and socket) needs a password
 * (scram-sha-256). The superuser's password reaches initdb in a file only its user can read,
 * removed afterwards, never on a command line.
 */
export async function initialiseCluster(options: InitialiseOptions): Promise<void> {
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const passwordFile = path.join(path.dirname(options.dataDir), `.initdb-${randomBytes(6).toString('hex')}`);
  await writeFile(passwordFile, `${options.password}\n`, { mode: 0o600, flag: 'wx' });
  try {
    if (options.identity) {
      await chown(options.dataDir, options.identity.uid, options.identity.gid);
      await chown(passwordFile, options.identity.uid, options.identity.gid);
    }
    await run(options, [
      `--pgdata=${options.dataDir}`,
      `--username=${options.superuser}`,
      `--pwfile=${passwordFile}`,
      '--auth=scram-sha-256',
      '--encoding=UTF8',
      '--locale-provider=builtin',
      '--builtin-locale=C.UTF-8',
      '--lc-messages=C',
    ]);
  } finally {
    await rm(passwordFile, { force: true });
  }
}

function run(options: InitialiseOptions, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const output: string[] = [];
    const child = spawn(options.initdb, args, {
      ...options.identity,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { LC_ALL: 'C' },
    });
    const keep = (chunk: Buffer): void => {
      const text = chunk.toString('utf8');
      output.push(text);
      options.onLog?.(text.trimEnd());
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`initdb failed (exit code ${code}):\n${output.join('')}`)),
    );
  });
}
