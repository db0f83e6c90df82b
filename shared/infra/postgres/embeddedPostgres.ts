import { existsSync } from 'node:fs';
import { chown, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { loadPasswords } from './credentialsFile';
import { freeLoopbackPort } from './freeLoopbackPort';
import { initialiseCluster } from './initialiseCluster';
import { livePostmaster, stopLeftoverPostmaster } from './livePostmaster';
import { startPostmaster } from './postmaster';
import { postgresBinaries } from './postgresBinaries';
import { postgresIdentity } from './postgresIdentity';
import { PostmasterSupervisor, type PostgresState, type SupervisorLogger } from './postmasterSupervisor';
import type { RestartPolicyOptions } from './restartPolicy';
import { connectAsSuperuser, ensureLoginRoles, loopbackUrl } from './superuserAccess';

export type { PostgresState } from './postmasterSupervisor';

export interface EmbeddedPostgresOptions {
  /** Directory holding the cluster's files; created on first start. */
  dataDir: string;
  /** Fixed port; when absent a free loopback port is chosen at each start (and kept across restarts). */
  port?: number;
  /** The superuser; `postgres` by default. */
  user?: string;
  /** The superuser's password; when absent a random one, kept in the credentials file. */
  password?: string;
  /** Plain login roles the cluster must have; their random passwords are kept in the credentials file. */
  loginRoles?: readonly string[];
  /** Defaults to `<dataDir>-credentials.json` beside the cluster (mode 0600). */
  credentialsFile?: string;
  /** false: the cluster and its credentials are deleted by stop() (tests). */
  persistent?: boolean;
  /** PostgreSQL's own output, line by line. */
  log?: (line: string) => void;
  /** Supervision events: one line per outage, one per recovery. */
  logger?: SupervisorLogger;
  restartPolicy?: RestartPolicyOptions;
  /** Called when the server died and could not be restarted (see RestartPolicy). */
  onGiveUp?: (error: Error) => void;
}

export interface RunningPostgres {
  readonly port: number;
  /** URL of `database` for the superuser, or for one of the `loginRoles`. */
  connectionString(database: string, role?: string): string;
  createDatabase(name: string): Promise<void>;
  /**
   * Supervision state, for /health/. A cluster shared with the process that started it reports
   * 'running' while that process's postmaster is alive, 'restarting' otherwise.
   */
  state(): PostgresState;
  isRunning(): boolean;
  /** The postmaster's process id (the one in postmaster.pid), while it runs. */
  pid(): number | undefined;
  /** Stops the server if this process started it; a shared cluster is left to its owner. */
  stop(): Promise<void>;
}

const SETTINGS = {
  listen_addresses: '127.0.0.1',
  unix_socket_directories: '', // TCP only: nothing for local users to find in /tmp
  lc_messages: 'C',
  max_connections: '300',
  shared_buffers: '256MB',
};
/** A chosen port can be taken before the server binds it: try a few. */
const PORT_ATTEMPTS = 3;

export function defaultCredentialsFile(dataDir: string): string {
  return path.join(path.dirname(path.resolve(dataDir)), `${path.basename(dataDir)}-credentials.json`);
}

/**
 * Starts (initialising it on first use) a supervised PostgreSQL cluster in `dataDir`, reachable on
 * 127.0.0.1 only and only with a password. If a live server of another process already runs on
 * `dataDir` (the service, when `npm run rebuild` starts beside it), that one is shared instead.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<RunningPostgres> {
  const dataDir = path.resolve(options.dataDir);
  const user = options.user ?? 'postgres';
  const loginRoles = options.loginRoles ?? [];
  const credentialsFile = options.credentialsFile ?? defaultCredentialsFile(dataDir);
  await mkdir(path.dirname(dataDir), { recursive: true });
  const passwords = await loadPasswords(credentialsFile, [
    ...(options.password === undefined ? [user] : []),
    ...loginRoles,
  ]);
  const password = options.password ?? passwords[user]!;
  const urlFor = (port: number) => (database: string, role?: string) => {
    if (role === undefined || role === user) return loopbackUrl(port, user, password, database);
    const rolePassword = loginRoles.includes(role) ? passwords[role] : undefined;
    if (rolePassword === undefined) throw new Error(`${role} is not a login role of this cluster`);
    return loopbackUrl(port, role, rolePassword, database);
  };
  const secure = async (port: number): Promise<void> => {
    const client = await connectAsSuperuser({ port, user, password, logger: options.logger });
    try {
      await ensureLoginRoles(client, Object.fromEntries(loginRoles.map((r) => [r, passwords[r]!])));
    } finally {
      await client.end();
    }
  };

  const live = livePostmaster(dataDir);
  if (live && !live.orphaned) {
    await secure(live.port);
    return sharedCluster(dataDir, live.port, urlFor(live.port));
  }
  if (live) await stopLeftoverPostmaster(dataDir, live.pid);

  const { supervisor, port } = await startSupervised(options, dataDir, user, password);
  try {
    await secure(port);
  } catch (error) {
    await supervisor.stop();
    throw error;
  }
  // Exiting without stop() (a crash, process.exit): ask for a fast shutdown; we cannot wait here.
  const stopOnExit = (): void => {
    const pid = supervisor.pid();
    if (pid === undefined) return;
    try {
      process.kill(pid, 'SIGINT');
    } catch {
      // already gone
    }
  };
  process.once('exit', stopOnExit);
  return {
    port,
    connectionString: urlFor(port),
    createDatabase: (name) => createDatabase(urlFor(port)('postgres'), name),
    state: () => supervisor.state(),
    isRunning: () => supervisor.state() === 'running',
    pid: () => supervisor.pid(),
    async stop() {
      process.off('exit', stopOnExit);
      await supervisor.stop();
      if (options.persistent === false) {
        await rm(dataDir, { recursive: true, force: true });
        await rm(credentialsFile, { force: true });
      }
    },
  };
}

async function startSupervised(
  options: EmbeddedPostgresOptions,
  dataDir: string,
  user: string,
  password: string,
): Promise<{ supervisor: PostmasterSupervisor; port: number }> {
  const identity = postgresIdentity();
  const binaries = postgresBinaries();
  if (!existsSync(path.join(dataDir, 'PG_VERSION')))
    await initialiseCluster({
      initdb: binaries.initdb,
      dataDir,
      superuser: user,
      password,
      identity,
      onLog: options.log,
    });
  else if (identity) await chown(dataDir, identity.uid, identity.gid);

  let port = options.port ?? (await freeLoopbackPort());
  const supervisor = new PostmasterSupervisor({
    // Restarts reuse the port: the connection pools keep their URLs and simply reconnect.
    start: () =>
      startPostmaster({
        binary: binaries.postgres,
        dataDir,
        port,
        settings: SETTINGS,
        identity,
        onLog: options.log,
      }),
    policy: options.restartPolicy,
    logger: options.logger,
    onGiveUp: options.onGiveUp,
  });
  for (let attempt = 1; ; attempt++) {
    try {
      await supervisor.start();
      return { supervisor, port };
    } catch (error) {
      if (options.port !== undefined || attempt >= PORT_ATTEMPTS) throw error;
      port = await freeLoopbackPort();
    }
  }
}

function sharedCluster(
  dataDir: string,
  port: number,
  connectionString: RunningPostgres['connectionString'],
): RunningPostgres {
  const pid = (): number | undefined => livePostmaster(dataDir)?.pid;
  return {
    port,
    connectionString,
    createDatabase: (name) => createDatabase(connectionString('postgres'), name),
    state: () => (pid() !== undefined ? 'running' : 'restarting'),
    isRunning: () => pid() !== undefined,
    pid,
    stop: () => Promise.resolve(),
  };
}

async function createDatabase(superuserUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: superuserUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
}
