import { randomBytes } from 'node:crypto';
import { chmod, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';

/** Passwords by role name. */
export type Passwords = Readonly<Record<string, string>>;

interface FileContent {
  readonly passwords: Record<string, string>;
}

const MODE = 0o600;
const LOCK_WAIT_MS = 15_000;
/** A lock older than this was left by a process killed while holding it. */
const STALE_LOCK_MS = 30_000;

/** 32 URL-safe characters (192 random bits): no escaping needed in a connection URL. */
export function randomPassword(): string {
  return randomBytes(24).toString('base64url');
}

/**
 * Reads the passwords of `roles` from `file`, generating and saving any that are missing. The file
 * is readable by its owner only (0600, re-tightened if someone loosened it). Processes starting at
 * the same time on one data directory serialise on a lock file, so they agree on every password.
 */
export async function loadPasswords(file: string, roles: readonly string[]): Promise<Passwords> {
  const existing = await readPasswords(file);
  if (existing && roles.every((role) => existing[role] !== undefined)) {
    await tightenMode(file);
    return existing;
  }
  return withLock(`${file}.lock`, async () => {
    const passwords = { ...(await readPasswords(file)) };
    for (const role of roles) passwords[role] ??= randomPassword();
    await writeAtomically(file, { passwords });
    return passwords;
  });
}

async function readPasswords(file: string): Promise<Record<string, string> | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const content = JSON.parse(text) as Partial<FileContent>;
  if (typeof content.passwords !== 'object' || content.passwords === null)
    throw new Error(`${file} is not a credentials file (no "passwords" object)`);
  return content.passwords;
}

async function tightenMode(file: string): Promise<void> {
  if (((await stat(file)).mode & 0o077) !== 0) await chmod(file, MODE);
}

/** Written beside the target and renamed over it: a reader never sees half a file. */
async function writeAtomically(file: string, content: FileContent): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(content, null, 2)}\n`, { mode: MODE, flag: 'w' });
  await chmod(temporary, MODE); // the mode option only applies when the file is created
  await rename(temporary, file);
}

async function withLock<T>(lockFile: string, work: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      await (await open(lockFile, 'wx', MODE)).close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = await stat(lockFile).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (age > STALE_LOCK_MS) await rm(lockFile, { force: true });
      else if (Date.now() > deadline)
        throw new Error(`${lockFile} is held by another process`, { cause: error });
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  try {
    return await work();
  } finally {
    await rm(lockFile, { force: true });
  }
}
